#include "sim/distribution.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/strings.hpp"

namespace fedsilo {

bool ValueRange::admits(double x) const { return std::isfinite(x) && (openMin ? x > min : x >= min); }

std::string ValueRange::describe() const { return fmt(openMin ? "> " : ">= ", min); }

namespace {

// The error of a spec: "option = text: what".
ConfigError specError(const std::string& option, const std::string& text, const std::string& what) {
  return ConfigError(fmt(option, " = ", text, ": ", what));
}

std::vector<double> numbers(const std::string& option, const std::string& text, const std::string& body) {
  try {
    return parseDoubleList(body, option);
  } catch (const ConfigError&) {
    throw specError(option, text, "expected numbers separated by commas after the distribution's name");
  }
}

void requireInRange(const std::string& option, const std::string& text, const std::vector<double>& values,
                    const ValueRange& range) {
  for (double x : values)
    if (!range.admits(x)) throw specError(option, text, fmt("every value must be finite and ", range.describe()));
}

// A file: spec's CSV: one `client,value` row per client (a first line `client,value` is a header; blank
// lines are skipped). Every client 0..clients-1 exactly once.
std::vector<double> readValueFile(const std::string& option, const std::string& text, const std::string& path,
                                  int clients, const ValueRange& range) {
  std::ifstream in(path);
  if (!in) throw specError(option, text, fmt("cannot read '", path, "': ", std::strerror(errno)));
  std::vector<double> values(static_cast<std::size_t>(clients), std::numeric_limits<double>::quiet_NaN());
  std::vector<int> givenAt(static_cast<std::size_t>(clients), 0);
  std::string line;
  for (int lineNo = 1; std::getline(in, line); ++lineNo) {
    const std::string row = trim(line);
    if (row.empty() || (lineNo == 1 && row == "client,value")) continue;
    const auto bad = [&](const std::string& why) {
      return specError(option, text, fmt(path, " line ", lineNo, ": ", why, " (got '", row, "')"));
    };
    const std::vector<std::string> fields = splitList(row, ',');
    if (fields.size() != 2) throw bad("expected two fields client,value");
    long long client = -1;
    double value = 0.0;
    try {
      client = parseInt(fields[0], "client");
      value = parseDouble(fields[1], "value");
    } catch (const ConfigError&) {
      throw bad("expected an integer client id and a number");
    }
    if (client < 0 || client >= clients) throw bad(fmt("client id must be in [0, ", clients - 1, "]"));
    if (!range.admits(value)) throw bad(fmt("the value must be finite and ", range.describe()));
    const auto k = static_cast<std::size_t>(client);
    if (givenAt[k] != 0) throw bad(fmt("client ", client, " is given twice (first on line ", givenAt[k], ")"));
    givenAt[k] = lineNo;
    values[k] = value;
  }
  for (int k = 0; k < clients; ++k)
    if (givenAt[static_cast<std::size_t>(k)] == 0)
      throw specError(option, text,
                      fmt(path, " gives no value for client ", k, " (it must give every client 0..", clients - 1, ")"));
  return values;
}

}  // namespace

DistributionSpec parseDistribution(const std::string& option, const std::string& text, int clients,
                                   const ValueRange& range) {
  DistributionSpec spec;
  spec.text = trim(text);
  const std::string& t = spec.text;
  const auto colon = t.find(':');
  const std::string name = colon == std::string::npos ? "" : trim(t.substr(0, colon));
  const std::string body = colon == std::string::npos ? t : trim(t.substr(colon + 1));
  const std::string expected =
      "expected constant:X, list:a,b,..., uniform:a,b, lognormal:mu,sigma, file:PATH or a number";
  if (colon == std::string::npos || name == "constant") {
    spec.kind = DistributionKind::Constant;
    try {
      spec.values = {parseDouble(body, option)};
    } catch (const ConfigError&) {
      throw specError(option, text, expected);
    }
    requireInRange(option, text, spec.values, range);
  } else if (name == "list") {
    spec.kind = DistributionKind::List;
    if (body.empty()) throw specError(option, text, "the list is empty (expected list:a,b,...)");
    spec.values = numbers(option, text, body);
    requireInRange(option, text, spec.values, range);
  } else if (name == "uniform") {
    spec.kind = DistributionKind::Uniform;
    spec.values = numbers(option, text, body);
    if (spec.values.size() != 2 || !(spec.values[0] <= spec.values[1]))
      throw specError(option, text, "expected uniform:a,b with a <= b");
    requireInRange(option, text, spec.values, range);
  } else if (name == "lognormal") {
    spec.kind = DistributionKind::Lognormal;
    spec.values = numbers(option, text, body);
    if (spec.values.size() != 2 || !std::isfinite(spec.values[0]) || !std::isfinite(spec.values[1]) ||
        spec.values[1] < 0.0)
      throw specError(option, text, "expected lognormal:mu,sigma with finite mu and sigma >= 0");
    // exp(...) is > 0: it fits every range of this model whose minimum is 0 (rates > 0, latency >= 0).
    if (range.min > 0.0) throw specError(option, text, "a lognormal can take values below the least allowed");
  } else if (name == "file") {
    spec.kind = DistributionKind::File;
    if (body.empty()) throw specError(option, text, "expected file:PATH");
    spec.values = readValueFile(option, text, body, clients, range);
  } else {
    throw specError(option, text, fmt("unknown distribution '", name, "'; ", expected));
  }
  return spec;
}

double drawValue(const DistributionSpec& spec, std::uint64_t seed, int client, std::uint64_t quantity) {
  const std::vector<double>& v = spec.values;
  switch (spec.kind) {
    case DistributionKind::Constant: return v.at(0);
    case DistributionKind::List: return v.at(static_cast<std::size_t>(client) % v.size());
    case DistributionKind::File: return v.at(static_cast<std::size_t>(client));
    case DistributionKind::Uniform: {
      Rng rng(seed, client, -1, Purpose::SystemProfile, quantity);
      return rng.uniform(v.at(0), v.at(1));
    }
    case DistributionKind::Lognormal: {
      Rng rng(seed, client, -1, Purpose::SystemProfile, quantity);
      return rng.lognormal(v.at(0), v.at(1));
    }
  }
  throw RuntimeError("internal error: unknown distribution kind");
}

}  // namespace fedsilo
