#include "privacy/epsilon_command.hpp"

#include <boost/program_options.hpp>
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "privacy/calibration.hpp"
#include "privacy/rdp_accountant.hpp"

namespace po = boost::program_options;

namespace fedsilo {

namespace {

struct EpsilonArgs {
  double sampleRate = 0.0;
  double noiseMultiplier = 0.0;
  long long steps = 0;
  double delta = 0.0;
  double targetEpsilon = 0.0;  // > 0: calibrate instead
  RdpConversion conversion = RdpConversion::Improved;
};

po::options_description epsilonOptions() {
  po::options_description o(
      "usage: fedsilo epsilon --sample_rate Q --noise_multiplier Z --steps T --delta D\n"
      "       fedsilo epsilon --sample_rate Q --target_epsilon E --steps T --delta D\n\n"
      "(epsilon, delta) of T steps of the sampled Gaussian mechanism (Poisson sampling at rate Q, noise\n"
      "standard deviation Z x the L2 sensitivity), from its Renyi DP over the standard orders; or the\n"
      "smallest noise multiplier whose epsilon is at most E. Options");
  o.add_options()("help,h", "print this help and exit")(
      "sample_rate", po::value<std::string>(), "Q in (0, 1]: the probability that a record (or client) is in a step")(
      "noise_multiplier", po::value<std::string>(), "Z >= 0: noise standard deviation over the clip norm")(
      "steps", po::value<std::string>(), "T >= 1: number of steps (rounds, for client-level DP)")(
      "delta", po::value<std::string>(), "D in (0, 1)")("target_epsilon", po::value<std::string>(),
                                                        "E > 0: print the calibrated noise multiplier instead")(
      "conversion", po::value<std::string>()->default_value("improved"),
      "RDP to (epsilon, delta): improved (Balle et al. 2020, as TF Privacy and Opacus today) or classic "
      "(Mironov 2017)");
  return o;
}

std::string required(const po::variables_map& vm, const char* key) {
  if (!vm.count(key)) throw ConfigError(fmt("--", key, " is required (see fedsilo epsilon --help)"));
  return vm[key].as<std::string>();
}

double parseInRange(const std::string& text, const char* key, bool (*ok)(double), const char* expected) {
  const double v = parseDouble(text, fmt("--", key));
  if (!ok(v)) throw ConfigError(fmt("--", key, " ", text, ": expected ", expected));
  return v;
}

EpsilonArgs toArgs(const po::variables_map& vm) {
  EpsilonArgs a;
  a.sampleRate = parseInRange(
      required(vm, "sample_rate"), "sample_rate", [](double v) { return v > 0.0 && v <= 1.0; }, "a number in (0, 1]");
  a.delta = parseInRange(
      required(vm, "delta"), "delta", [](double v) { return v > 0.0 && v < 1.0; }, "a number in (0, 1)");
  const std::string stepsText = required(vm, "steps");
  a.steps = parseInt(stepsText, "--steps");
  if (a.steps < 1) throw ConfigError(fmt("--steps ", stepsText, ": expected an integer >= 1"));
  const bool hasNoise = vm.count("noise_multiplier") != 0, hasTarget = vm.count("target_epsilon") != 0;
  if (hasNoise == hasTarget)
    throw ConfigError(
        "give exactly one of --noise_multiplier (to compute epsilon) and --target_epsilon (to calibrate)");
  if (hasNoise)
    a.noiseMultiplier = parseInRange(
        vm["noise_multiplier"].as<std::string>(), "noise_multiplier",
        [](double v) { return v >= 0.0 && std::isfinite(v); }, "a finite number >= 0");
  else
    a.targetEpsilon = parseInRange(
        vm["target_epsilon"].as<std::string>(), "target_epsilon", [](double v) { return v > 0.0 && std::isfinite(v); },
        "a finite number > 0");
  const std::string conv = trim(vm["conversion"].as<std::string>());
  if (conv == "classic")
    a.conversion = RdpConversion::Classic;
  else if (conv != "improved")
    throw ConfigError(fmt("--conversion ", conv, ": expected improved or classic"));
  return a;
}

std::string run(const EpsilonArgs& a) {
  std::ostringstream os;
  os.precision(6);
  if (a.targetEpsilon > 0.0) {
    const Calibration c = calibrateNoiseMultiplier(a.sampleRate, a.steps, a.delta, a.targetEpsilon, 1e-6, a.conversion);
    os << "noise_multiplier = " << c.noiseMultiplier << "\n"
       << "epsilon = " << c.epsilon << " (delta = " << a.delta << ", optimal RDP order " << c.order << ")\n";
  } else {
    const PrivacySpent s = sgmEpsilon(a.sampleRate, a.noiseMultiplier, a.steps, a.delta, a.conversion);
    os << "epsilon = " << s.epsilon << "\n";
    if (std::isfinite(s.epsilon))
      os << "optimal RDP order = " << s.order << "\n";
    else
      os << "(no finite bound: the noise multiplier is too small for every order)\n";
  }
  return os.str();
}

}  // namespace

int runEpsilonCommand(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  const po::options_description options = epsilonOptions();
  try {
    po::variables_map vm;
    try {
      po::store(po::command_line_parser(argc, argv).options(options).style(po::command_line_style::unix_style).run(),
                vm);
    } catch (const po::error& e) {
      throw ConfigError(e.what());
    }
    if (vm.count("help")) {
      out << options << "\n";
      return 0;
    }
    out << run(toArgs(vm)) << std::flush;
    return 0;
  } catch (const Error& e) {
    err << "fedsilo epsilon: error: " << e.what() << std::endl;
    return static_cast<int>(e.code());
  }
}

int runEpsilonCommand(int argc, const char* const* argv) { return runEpsilonCommand(argc, argv, std::cout, std::cerr); }

}  // namespace fedsilo
