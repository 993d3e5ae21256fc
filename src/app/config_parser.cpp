#include "app/config_parser.hpp"

#include <boost/program_options.hpp>
#include <map>
#include <set>
#include <sstream>

#include "app/compress_options.hpp"
#include "app/config_file.hpp"
#include "app/config_reader.hpp"
#include "app/environment_help.hpp"
#include "app/experiment_options.hpp"
#include "app/option_sources.hpp"
#include "app/option_suggestion.hpp"
#include "app/privacy_options.hpp"
#include "app/robust_options.hpp"
#include "app/system_options.hpp"
#include "app/raw_values.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "data/loaders.hpp"
#include "fl/algorithm.hpp"

namespace po = boost::program_options;

namespace fedsilo {

namespace {

// An option's help with its default spelled out where Boost shows none (an empty default string).
std::string helpText(const std::string& key, const std::string& def, const std::string& help) {
  if (key == "data.dir")
    return help + " (default: the dataset's standard location: " + defaultDataDir(DatasetKind::FashionMnist) +
           " for fashion_mnist; heart: the data/heart_disease shipped with fedsilo, found from the executable's path; "
           "none for the other datasets, which need it)";
  if (!def.empty() || help.find("(default:") != std::string::npos) return help;
  return help + " (default: none)";
}

std::string sectionOf(const std::string& key) {
  const auto dot = key.find('.');
  return dot == std::string::npos ? "" : key.substr(0, dot);
}

// The fully resolved configuration as INI text: top-level keys, then one [section] per section.
std::string resolvedIni(const std::map<std::string, std::string>& values) {
  std::ostringstream os;
  os << "# fedsilo " << FEDSILO_VERSION << " resolved configuration\n";
  for (const auto& [key, value] : values)
    if (sectionOf(key).empty()) os << key << " = " << value << "\n";
  std::string current;
  for (const auto& [key, value] : values) {
    const std::string section = sectionOf(key);
    if (section.empty()) continue;
    if (section != current) {
      os << "\n[" << section << "]\n";
      current = section;
    }
    os << key.substr(section.size() + 1) << " = " << value << "\n";
  }
  return os.str();
}

// The options fedsilo accepts: generic (command line only) and the experiment's and algorithms'
// (command line and INI file), with the default of each of the latter as text.
struct OptionSet {
  po::options_description generic{"Generic options"};
  po::options_description experiment{"Experiment options (INI: top-level keys, or key = value under [section])"};
  po::options_description algorithm{"Algorithm options"};
  po::options_description privacy{"Privacy options (docs/privacy.md)"};
  po::options_description robust{"Robustness options (docs/robustness.md)"};
  po::options_description system{"System-model options (docs/system.md)"};
  po::options_description compress{"Compression options (docs/compression.md)"};
  po::options_description all, inFile;
  std::vector<std::pair<std::string, std::string>> defaults;

  OptionSet() {
    generic.add_options()("help,h", "print this help and exit")("version", "print the version and exit")(
        "config,c", po::value<std::string>(), "INI configuration file")(
        "resume", "continue from <output>.ckpt if it exists; when <output> is a finished run's results file and "
                  "no checkpoint is left, say so and exit 0, changing nothing")(
        "overwrite", "replace <output> when it holds a finished run's results (without it such a run stops at "
                     "start-up, exit 2); the old file stays until the new one is complete")(
        "quiet,q", "print nothing but errors: no start-up line, round lines, progress, decisions or warnings; the "
                   "error line of a failed run still goes to standard error")(
        "dry-run", "print the configuration fully resolved, then make the run's start-up checks without training "
                   "or writing anything (data, partition file, alpha_fedavg.reference and, with --resume, the "
                   "checkpoint read and checked; the output folder writable; no other run holding the output; no "
                   "finished results file replaced without --overwrite) and exit with the code the run would (0 when "
                   "it can start)");
    for (const auto& o : experimentOptions()) add(experiment, o.key, o.def, o.help);
    for (const auto& o : allAlgorithmOptions()) add(algorithm, o.key, o.defaultValue, o.help);
    for (const auto& o : privacyOptions()) add(privacy, o.key, o.defaultValue, o.help);
    for (const auto& o : robustOptions()) add(robust, o.key, o.defaultValue, o.help);
    for (const auto& o : systemOptions()) add(system, o.key, o.defaultValue, o.help);
    for (const auto& o : compressOptions()) add(compress, o.key, o.defaultValue, o.help);
    all.add(generic).add(experiment).add(algorithm).add(privacy).add(robust).add(compress).add(system);
    inFile.add(experiment).add(algorithm).add(privacy).add(robust).add(compress).add(system);
  }

 private:
  void add(po::options_description& group, const std::string& key, const std::string& def, const std::string& help) {
    group.add_options()(key.c_str(), po::value<std::string>()->default_value(def), helpText(key, def, help).c_str());
    defaults.emplace_back(key, def);
  }
};

std::string usageText(const OptionSet& options) {
  std::ostringstream os;
  os << "fedsilo " << FEDSILO_VERSION << ": cross-silo federated learning on MPI\n\n"
     << "usage: mpirun -n P fedsilo --config configs/X.ini [--section.key value ...]\n"
     << "       fedsilo epsilon --sample_rate Q --noise_multiplier Z --steps T --delta D   (the privacy accountant\n"
     << "       alone: no MPI, no training; fedsilo epsilon --help)\n"
     << "       fedsilo calibrate --model NAME [--dataset D] [--train.batch B] [options]   (this machine's\n"
     << "       training rate as system.compute_gflops; docs/system.md)\n\n"
     << options.all << "\nAlgorithms:\n";
  for (const auto& e : algorithmRegistry()) os << "  " << e.name << ": " << e.summary << "\n";
  os << "\nBoolean options take true/false, 1/0, yes/no or on/off in any case (the resolved configuration says true or\n"
     << "false). The INI file must be text (UTF-8; a byte-order mark at its start is skipped).\n"
     << "\nAn INI section [SECTION @ ALGORITHM, ...] (e.g. [train @ pfedme]) holds SECTION's keys for those\n"
     << "algorithms only; the command line wins over it, it wins over the plain sections. SECTION is one of the\n"
     << "experiment sections; the scoped sections of algorithms that do not run are checked as well.\n";
  os << "\nExit codes: 0 success, 2 bad command line or configuration, 3 bad or missing input data, 1 other errors,\n"
     << "74 storage failure while the run wrote its files (no space, quota, I/O error: the last good <output>.ckpt\n"
     << "is kept; free space and run again with --resume), 75 interrupted by SIGTERM/SIGUSR1 after writing\n"
     << "<output>.ckpt (run again with --resume). mpirun itself exits 1 when it gets SIGTERM or Ctrl-C: send it\n"
     << "SIGUSR1, or run through jobs/local/run.sh (docs/hpc.md).\n";
  os << "\n" << environmentHelp();
  return os.str();
}

// Boolean options (those whose default is true or false) are stored as true or false, whichever of
// the accepted spellings was given; a value that is none of them is an error, also for the options of
// an algorithm that is not selected.
void normaliseBooleans(const OptionSet& options, std::map<std::string, std::string>& values) {
  for (const auto& [key, def] : options.defaults)
    if (def == "true" || def == "false") values[key] = parseBool(key, values[key]) ? "true" : "false";
}

// The sections that can be scoped to an algorithm: those of the experiment options.
std::set<std::string> scopableSections() {
  std::set<std::string> sections;
  for (const auto& o : experimentOptions())
    if (!sectionOf(o.key).empty()) sections.insert(sectionOf(o.key));
  return sections;
}

// Every experiment and algorithm option as text (the command line's, else the file's, else the
// default), data.dir resolved, booleans normalised.
std::map<std::string, std::string> resolvedValues(const OptionSet& options, const OptionTexts& file,
                                                  const OptionTexts& commandLine) {
  std::map<std::string, std::string> values = layeredValues(options.defaults, file, commandLine);
  // Fully resolved: an empty data.dir becomes the dataset's default directory (the one the loader
  // reads), so the stored configuration and the --resume comparison name it. An unknown dataset is
  // reported by toConfig.
  if (trim(values["data.dir"]).empty())
    if (const std::optional<DatasetKind> dataset = findEnum<DatasetKind>(values["dataset"]))
      values["data.dir"] = defaultDataDir(*dataset);
  normaliseBooleans(options, values);
  return values;
}

// Sections scoped to algorithms that do not run are read as those algorithms' runs with the same
// command line would read them: every value's type and range and the rules between the experiment's
// options (the algorithm's own checks are made when it runs).
void checkOtherScopes(const OptionSet& options, const ConfigFileValues& file, const OptionTexts& commandLine,
                      const std::string& running) {
  std::set<std::string> others;
  for (const auto& s : file.scoped) others.insert(s.algorithms.begin(), s.algorithms.end());
  others.erase(running);
  for (const auto& algorithm : others) {
    std::map<std::string, std::string> values = resolvedValues(options, file.forAlgorithm(algorithm), commandLine);
    values["algorithm"] = algorithm;
    try {
      ExperimentConfig c;
      readExperimentOptions(RawValues(values), c);
    } catch (const ConfigError& e) {
      throw scopedError(file, *scopeOfError(file, commandLine, algorithm, e.what(), true),
                        fmt("as ", algorithm, " would run: ", e.what()));
    }
  }
}

// The configuration that runs; an error about a key of a section scoped to its algorithm names it.
ExperimentConfig runConfig(const ConfigFileValues& file, const OptionTexts& commandLine,
                           std::map<std::string, std::string>& values) {
  const std::string algorithm = trim(values.at("algorithm"));
  try {
    return toConfig(values, commandLine.count("rounds") || file.plain.count("rounds"));
  } catch (const ConfigError& e) {
    if (const ScopedSection* s = scopeOfError(file, commandLine, algorithm, e.what(), false))
      throw scopedError(file, *s, e.what());
    throw;
  }
}

}  // namespace

ParseOutcome parseArguments(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"fedsilo"};
  for (const auto& a : args) argv.push_back(a.c_str());
  return parseCommandLine(static_cast<int>(argv.size()), argv.data());
}

std::map<std::string, std::string> optionDefaults() {
  const OptionSet options;
  return {options.defaults.begin(), options.defaults.end()};
}

ParseOutcome parseCommandLine(int argc, const char* const* argv) {
  const OptionSet options;
  ParseOutcome out;
  po::variables_map vm;
  try {
    storeCommandLine(argc, argv, options.all, vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    throw ConfigError(fmt("command line: ", unrecognisedOption(e.get_option_name(), optionNames(options.all))));
  } catch (const po::error& e) {
    throw ConfigError(fmt("command line/config: ", e.what()));
  }
  if (vm.count("help") || vm.count("version")) {
    out.action = vm.count("help") ? ParseOutcome::Action::Help : ParseOutcome::Action::Version;
    out.text = vm.count("help") ? usageText(options) : std::string("fedsilo ") + FEDSILO_VERSION + "\n";
    return out;
  }
  ConfigFileValues file;
  if (vm.count("config")) file = readConfigFile(vm["config"].as<std::string>(), options.inFile, scopableSections());
  const OptionTexts commandLine = commandLineValues(vm, options.defaults);
  const std::string algorithm = trim(layeredValues(options.defaults, file.plain, commandLine).at("algorithm"));
  std::map<std::string, std::string> values = resolvedValues(options, file.forAlgorithm(algorithm), commandLine);
  out.config = runConfig(file, commandLine, values);
  checkOtherScopes(options, file, commandLine, algorithm);
  out.config.checkpoint.resume = vm.count("resume") != 0;
  out.config.output.quiet = vm.count("quiet") != 0;
  out.config.output.overwrite = vm.count("overwrite") != 0;
  out.config.resolvedIni = resolvedIni(values);
  if (vm.count("dry-run")) {
    out.action = ParseOutcome::Action::DryRun;
    out.text = out.config.resolvedIni;
  }
  return out;
}

}  // namespace fedsilo
