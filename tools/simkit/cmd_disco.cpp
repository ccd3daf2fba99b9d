// simkit disco: a distributional thesaurus (DISCO) from a corpus, and its queries.
#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"
#include "simkit/dedup.hpp"
#include "simkit/disco.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/progress.hpp"

namespace simkit::cli {

namespace {

struct BuildOptions {
  CommonOptions common;
  std::vector<std::string> corpus;
  std::string output;
  disco::BuildOptions build;
};

struct QueryOptions {
  CommonOptions common;
  std::string model;
  std::vector<std::string> words;
  std::size_t k = 10;
  std::string format = "tsv";
  std::string output = "-";
};

int run_build(const BuildOptions& options) {
  const Context context = make_context(options.common);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> files = dedup::list_files(options.corpus, true);
  std::uint64_t bytes = 0;
  for (const std::string& f : files) bytes += MappedFile::open(f).size();
  disco::Model model;
  {
    Progress progress("counting", 2 * bytes, "B");  // two passes
    model = disco::build(files, options.build, &progress);
  }
  if (model.size() == 0)
    throw InputError(Location{files.size() == 1 ? files[0] : options.corpus[0]},
                     "the corpus has no word that could be paired (empty, or only stop words)");
  disco::write_model(model, options.output);
  if (context.timings)
    note(fmt::format("timing: counted {:.1f} MB in {:.3f} s ({:.1f} MB/s): {} words, {} features of MI > 0",
                     bytes / 1e6, seconds_since(start), bytes / 1e6 / seconds_since(start), model.size(),
                     model.features.size()));
  return kExitOk;
}

int run_compare(const QueryOptions& options) {
  if (options.words.size() != 2) throw UsageError("disco compare takes two words");
  make_context(options.common);
  const disco::Model model = disco::read_model(options.model);
  const std::size_t a = disco::lookup(model, options.words[0]), b = disco::lookup(model, options.words[1]);
  OutputFile out(options.output);
  out.write(fmt::format("{}\t{}\t{:.6f}\n", options.words[0], options.words[1], disco::similarity(model, a, b)));
  out.commit();
  return kExitOk;
}

int run_similar(const QueryOptions& options) {
  if (options.format != "tsv") throw UsageError(fmt::format("--format {}: expected tsv", quote(options.format)));
  if (options.k == 0) throw UsageError("--k must be at least 1");
  make_context(options.common);
  const disco::Model model = disco::read_model(options.model);
  std::string text;
  for (const std::string& word : options.words) {
    const std::size_t row = disco::lookup(model, word);
    std::size_t rank = 0;
    for (const disco::Neighbour& n : disco::most_similar(model, row, options.k))
      text += fmt::format("{}\t{}\t{}\t{:.6f}\n", word, ++rank, model.words[n.word], n.score);
  }
  OutputFile out(options.output);
  out.write(text);
  out.commit();
  return kExitOk;
}

int run_evaluate(const QueryOptions& options) {
  make_context(options.common);
  const disco::Model model = disco::read_model(options.model);
  OutputFile out(options.output);
  for (const std::string& gold : options.words) {
    const disco::Evaluation e = disco::evaluate(model, disco::read_gold(gold));
    out.write(fmt::format("{}\tspearman\t{:.4f}\tcovered\t{}\tof\t{}\n", gold, e.rho, e.covered, e.pairs));
  }
  out.commit();
  return kExitOk;
}

}  // namespace

Runner add_disco_command(CLI::App& app) {
  auto build = std::make_shared<BuildOptions>();
  auto compare = std::make_shared<QueryOptions>();
  auto similar = std::make_shared<QueryOptions>();
  auto evaluate = std::make_shared<QueryOptions>();
  CLI::App* command = app.add_subcommand(
      "disco", "Distributional word similarity (DISCO): words alike because they keep the same company.");
  command->require_subcommand(1);
  command->footer(
      "Examples:\n"
      "  simkit disco build corpus.txt -o corpus.skd --words 20000\n"
      "  simkit disco similar --model corpus.skd king queen --k 10\n"
      "  simkit disco compare --model corpus.skd cat dog\n"
      "  simkit disco evaluate --model corpus.skd EN-WS-353-ALL.txt");

  CLI::App* b = command->add_subcommand(
      "build",
      "Counts window co-occurrences <w1, r, w2> in a corpus (UTF-8 text files or directories; a sentence\n"
      "never crosses a line end), computes their mutual information (natural log; only MI > 0 kept as\n"
      "features) and writes the model (.skd).");
  b->add_option("corpus", build->corpus, "text files or directories")->required();
  b->add_option("-o,--output", build->output, "the model file to write")->required();
  b->add_option("--window", build->build.window, "each word pairs with the window - 1 words on each side")
      ->capture_default_str();
  b->add_option("--stopwords", build->build.stopwords,
                "FILE (a word a line) or none; default: the bundled English list. Stop words keep their "
                "positions but are never paired");
  b->add_option("--min-count", build->build.min_count, "drop words seen fewer times")->capture_default_str();
  b->add_option("--words", build->build.words, "vectors for the N most frequent words only (0 = all)")
      ->capture_default_str();
  b->add_flag("--keep-case", build->build.keep_case, "do not lower-case words");
  add_common_options(*b, build->common);

  const auto add_query = [&](const char* name, const char* what, QueryOptions& o, const char* words) {
    CLI::App* sub = command->add_subcommand(name, what);
    sub->add_option("-m,--model", o.model, "the model (.skd, from 'simkit disco build')")->required();
    sub->add_option(words[0] == 'g' ? "gold" : "words", o.words, words)->required();
    sub->add_option("-o,--output", o.output, "output file (default: standard output)");
    add_common_options(*sub, o.common);
    return sub;
  };
  add_query("compare", "Prints 'W1<TAB>W2<TAB>score', Lin's similarity of two words (0..1, 6 decimals).", *compare,
            "the two words");
  CLI::App* s = add_query("similar", "Prints 'word<TAB>rank<TAB>neighbour<TAB>score' for each word's k most similar "
                                     "words (ties by the more frequent word).",
                          *similar, "the words");
  s->add_option("-k,--k", similar->k, "neighbours per word")->capture_default_str();
  s->add_option("--format", similar->format, "tsv")->capture_default_str();
  add_query("evaluate",
            "Spearman's rho of the model's similarities against word-similarity gold standards\n"
            "('word1<TAB>word2<TAB>score' lines), over the pairs the vocabulary covers (reported).",
            *evaluate, "gold-standard files");

  return [b, build, compare, similar, evaluate, command]() {
    if (b->parsed()) return run_build(*build);
    if (command->get_subcommand("compare")->parsed()) return run_compare(*compare);
    if (command->get_subcommand("similar")->parsed()) return run_similar(*similar);
    return run_evaluate(*evaluate);
  };
}

}  // namespace simkit::cli
