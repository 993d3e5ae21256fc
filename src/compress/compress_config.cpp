#include "compress/compress_config.hpp"

#include <cmath>

#include "compress/registry.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace fedsilo {

bool zfpAvailable() {
#ifdef FEDSILO_HAVE_ZFP
  return true;
#else
  return false;
#endif
}

namespace {

bool methodIs(CompressMethod m, std::initializer_list<CompressMethod> any) {
  for (CompressMethod a : any)
    if (m == a) return true;
  return false;
}

// One line when an option is given for a method it does not apply to.
void requireApplies(bool given, bool applies, const std::string& option, const std::string& value,
                    CompressMethod m, const char* appliesTo) {
  if (given && !applies)
    throw ConfigError(fmt(option, " = ", value, ": does not apply to fl.compress = ", compressMethodName(m),
                          " (it applies to ", appliesTo, ")"));
}

void validateBits(const CompressConfig& c) {
  if (!c.bits) return;
  const int maxBits = c.method == CompressMethod::Zfp ? 32 : 16;
  if (*c.bits < 1 || *c.bits > maxBits)
    throw ConfigError(fmt("fl.compress_bits = ", *c.bits, ": expected 1..", maxBits, " for fl.compress = ",
                          compressMethodName(c.method)));
}

}  // namespace

void validateCompressConfig(const CompressConfig& c) {
  using M = CompressMethod;
  const CompressMethod method = c.method;
  const auto& bits = c.bits;
  const auto& ratio = c.ratio;
  const auto& tolerance = c.tolerance;
  if (method == M::Zfp && !zfpAvailable())
    throw ConfigError("fl.compress = zfp: this build lacks the ZFP library (configure with -DFEDSILO_ZFP=ON; "
                      "Debian: libzfp-dev)");
  requireApplies(bits.has_value(), methodIs(method, {M::Qsgd, M::Zfp}), "fl.compress_bits",
                 bits ? std::to_string(*bits) : "", method, "qsgd, zfp");
  requireApplies(ratio.has_value(), methodIs(method, {M::TopK, M::RandK}), "fl.compress_ratio",
                 ratio ? fmt(*ratio) : "", method, "topk, randk");
  requireApplies(tolerance.has_value(), method == M::Zfp, "fl.compress_tolerance", tolerance ? fmt(*tolerance) : "",
                 method, "zfp");
  requireApplies(c.downlink, c.active(), "fl.compress_downlink", "true", method, "every method but none");
  requireApplies(c.errorFeedback, c.active(), "fl.error_feedback", "true", method, "every method but none");
  validateBits(c);
  if (ratio && !(*ratio > 0.0 && *ratio <= 1.0))
    throw ConfigError(fmt("fl.compress_ratio = ", *ratio, ": expected a fraction in (0, 1]"));
  if (tolerance && !(*tolerance > 0.0 && std::isfinite(*tolerance)))
    throw ConfigError(fmt("fl.compress_tolerance = ", *tolerance, ": expected a finite error bound > 0"));
  if (bits && tolerance)
    throw ConfigError(fmt("fl.compress_bits = ", *bits, " and fl.compress_tolerance = ", *tolerance,
                          ": zfp runs at a fixed rate or a fixed accuracy, give one of them"));
}

namespace {

bool parseBool(const std::string& text, const std::string& option) {
  const std::string t = trim(text);
  if (t == "true" || t == "1" || t == "yes" || t == "on") return true;
  if (t == "false" || t == "0" || t == "no" || t == "off") return false;
  throw ConfigError(fmt(option, " = ", text, ": expected true or false"));
}

const std::string* find(const std::map<std::string, std::string>& options, const std::string& key) {
  auto it = options.find(key);
  return it == options.end() ? nullptr : &it->second;
}

}  // namespace

CompressConfig parseCompressConfig(const std::map<std::string, std::string>& options) {
  CompressConfig c;
  if (const std::string* v = find(options, "fl.compress")) c.method = parseCompressMethod(trim(*v));
  if (const std::string* v = find(options, "fl.compress_bits")) {
    const long long b = parseInt(*v, "fl.compress_bits");
    if (b < 1 || b > 32) throw ConfigError(fmt("fl.compress_bits = ", *v, ": expected 1..16 (qsgd) or 1..32 (zfp)"));
    c.bits = static_cast<int>(b);
  }
  if (const std::string* v = find(options, "fl.compress_ratio")) c.ratio = parseDouble(*v, "fl.compress_ratio");
  if (const std::string* v = find(options, "fl.compress_tolerance"))
    c.tolerance = parseDouble(*v, "fl.compress_tolerance");
  if (const std::string* v = find(options, "fl.compress_downlink")) c.downlink = parseBool(*v, "fl.compress_downlink");
  if (const std::string* v = find(options, "fl.error_feedback")) c.errorFeedback = parseBool(*v, "fl.error_feedback");
  validateCompressConfig(c);
  return c;
}

}  // namespace fedsilo
