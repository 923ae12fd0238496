// soak: one long sampled generation in one session, checking the bounded cache against the spec
// (shared/docs/memory-architecture.md, sections 2 and 3) after every token, and watching the
// resident set size, which must stay flat once warmed up.
//
// Invariants, at query position q with window W and the sink prefix P (1 for bos, N for first:N,
// 0 for none; the stream starts with BOS, so the sinks are positions [0, min(P, q + 1))):
//   - the occupied slots hold exactly {k : keep(q, k)} = sinks U [max(0, q - W + 1), q], and
//     every one of them is marked kept;
//   - occupied ring slots = min(ringTokens, W), evictions = max(0, ringTokens - W), where
//     ringTokens = q + 1 - |sinks|;
//   - sinks used = |sinks|, tokens seen = q + 1, the query's slot holds q;
//   - bytes allocated never change.
// Each check costs O(P + W), so a 100k-token soak checks every step.
#include "cli_common.h"
#include "commands.h"

#include <algorithm>
#include <chrono>
#include <iostream>

namespace sinkscope::cli {

namespace {

constexpr int64_t kMaxSoakTokens = int64_t{1} << 40;
constexpr int64_t kDefaultKvWindow = 64;
constexpr int64_t kRssReportEvery = 10'000;
constexpr int64_t kMaxWarmupTokens = 10'000;
constexpr int kMaxPrintedViolations = 10;

// How many leading positions the session's sink mode pins (the stream starts with BOS).
int64_t sinkPrefix(const SessionOptions& options) {
    switch (options.sinks) {
    case SinkMode::ToolsAndBos:
        return 1;
    case SinkMode::FirstN:
        return options.firstN;
    case SinkMode::None:
        break;
    }
    return 0;
}

// RSS is measured from here on: 10k tokens, or a tenth of a shorter soak.
int64_t warmupTokens(int64_t tokens) {
    return std::min(kMaxWarmupTokens, std::max<int64_t>(1, tokens / 10));
}

class CacheInvariants {
public:
    explicit CacheInvariants(int64_t sinkPrefix) : m_sinkPrefix(sinkPrefix) {}

    // Appends a message per invariant the step breaks.
    void check(const StepSnapshot& step, std::vector<std::string>& violations) {
        const Expected expected = expectedFor(step);
        const auto fail = [&](const std::string& what) {
            violations.push_back("position " + std::to_string(expected.q) + ": " + what);
        };
        checkCounters(step, expected, fail);
        checkSlots(step, expected, fail);
    }

private:
    // What the spec says the cache holds after the token at position q.
    struct Expected {
        int64_t q = 0;
        int64_t window = 0;
        int64_t sinks = 0;      // the sink prefix [0, sinks)
        int64_t ringTokens = 0; // non-sink tokens fed so far
    };

    Expected expectedFor(const StepSnapshot& step) const {
        Expected e;
        e.q = step.queryPosition;
        e.window = step.effectiveWindow;
        e.sinks = std::min(m_sinkPrefix, e.q + 1);
        e.ringTokens = e.q + 1 - e.sinks;
        return e;
    }

    template <typename Fail>
    void checkCounters(const StepSnapshot& step, const Expected& e, const Fail& fail) {
        if (m_bytesAllocated < 0) m_bytesAllocated = step.bytesAllocated;
        if (step.bytesAllocated != m_bytesAllocated)
            fail("bytes allocated changed from " + std::to_string(m_bytesAllocated) + " to " +
                 std::to_string(step.bytesAllocated));
        if (step.tokensSeen != e.q + 1) fail("tokens seen " + std::to_string(step.tokensSeen));
        if (step.sinksUsed != e.sinks) fail("sinks used " + std::to_string(step.sinksUsed));
        if (step.evictions != std::max<int64_t>(0, e.ringTokens - e.window))
            fail("evictions " + std::to_string(step.evictions));
        if (step.querySlot < 0 || static_cast<size_t>(step.querySlot) >= step.cacheSlots.size() ||
            step.cacheSlots[static_cast<size_t>(step.querySlot)].position != e.q)
            fail("the query's slot does not hold it");
    }

    template <typename Fail>
    void checkSlots(const StepSnapshot& step, const Expected& e, const Fail& fail) {
        m_occupied.clear();
        int64_t ringOccupied = 0;
        for (const SlotView& slot : step.cacheSlots) {
            if (slot.kind == SlotKind::Empty) continue;
            m_occupied.push_back(slot.position);
            ringOccupied += slot.kind == SlotKind::Ring ? 1 : 0;
            if (!slot.kept) fail("slot of position " + std::to_string(slot.position) + " not kept");
            if ((slot.kind == SlotKind::Sink) != (slot.position < e.sinks))
                fail("position " + std::to_string(slot.position) + " has the wrong slot kind");
        }
        if (ringOccupied != std::min(e.ringTokens, e.window))
            fail("occupied ring slots " + std::to_string(ringOccupied));
        std::sort(m_occupied.begin(), m_occupied.end());
        if (m_occupied != keptPositions(e)) fail("the occupied slots are not {k : keep(q, k)}");
    }

    // {k : keep(q, k)}, ascending: the sink prefix, then the window.
    const std::vector<int64_t>& keptPositions(const Expected& e) {
        m_expected.clear();
        for (int64_t k = 0; k < e.sinks; ++k)
            m_expected.push_back(k);
        for (int64_t k = std::max(e.sinks, e.q - e.window + 1); k <= e.q; ++k)
            m_expected.push_back(k);
        return m_expected;
    }

    int64_t m_sinkPrefix;
    int64_t m_bytesAllocated = -1;
    std::vector<int64_t> m_occupied; // scratch [occupied slots], reused so the soak stays flat
    std::vector<int64_t> m_expected; // scratch [sinks + window]
};

struct SoakFigures {
    int64_t tokens = 0;
    int64_t violations = 0;
    int64_t rssStart = 0; // after the warm-up
    int64_t rssEnd = 0;
    double seconds = 0;
};

void reportProgress(const SoakFigures& figures, int64_t tokens, double seconds, bool json) {
    const int64_t rss = currentRssBytes();
    if (json) {
        std::cerr << nlohmann::ordered_json{{"tokens", tokens},
                                            {"rss_bytes", rss},
                                            {"invariant_violations", figures.violations},
                                            {"tokens_per_s", tokensPerSecond(tokens, seconds)}}
                         .dump()
                  << '\n';
        return;
    }
    std::cerr << "soak: " << tokens << " tokens, RSS " << rss / 1024 << " KiB, "
              << figures.violations << " invariant violations\n";
}

// BOS, then `tokens` sampled tokens, EOS fed like any other. Each token goes through prefill(),
// which pins by the session's sink mode (generate() pins no generated token, and keeps them all).
SoakFigures soak(Session& session, Sampler& sampler, int64_t tokens, bool json) {
    CacheInvariants invariants(sinkPrefix(session.options()));
    std::vector<std::string> violations;
    SoakFigures figures;
    const int64_t warmup = warmupTokens(tokens);
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    int32_t token = session.model().tokenizer().bos();
    for (int64_t generated = 0;; ++generated) {
        const std::span<const float> logits = session.prefill(std::span(&token, 1));
        violations.clear();
        invariants.check(session.snapshot(), violations);
        for (const std::string& violation : violations)
            if (figures.violations++ < kMaxPrintedViolations)
                std::cerr << "soak: invariant violated at " << violation << '\n';
        if (generated == warmup) figures.rssStart = currentRssBytes();
        if (generated > 0 && generated % kRssReportEvery == 0)
            reportProgress(figures, generated, elapsed(), json);
        if (generated == tokens) break;
        token = sampler.sample(logits);
    }
    figures.tokens = tokens;
    figures.rssEnd = currentRssBytes();
    figures.seconds = elapsed();
    return figures;
}

} // namespace

int soakCommand(CommandArgs args) {
    const ParsedArgs parsed = ParsedArgs::parse(
        "soak", withSessionOptions({{"--model"}, {"--tokens"}, {"--seed"}, {"--json", false}}),
        args);
    const std::string modelPath = parsed.required("--model");
    const int64_t tokens = parseInteger("--tokens", parsed.required("--tokens"), 1, kMaxSoakTokens);
    SamplerOptions samplerOptions;
    samplerOptions.seed = static_cast<uint64_t>(
        parsed.integer("--seed", static_cast<int64_t>(samplerOptions.seed), 0, INT64_MAX));
    SessionOptions defaults;
    defaults.kvWindow = kDefaultKvWindow;
    const SessionOptions options = sessionOptionsFromArgs(parsed, defaults);
    const bool json = parsed.has("--json");

    const std::unique_ptr<Model> model = loadModel(modelPath);
    const std::unique_ptr<Session> session = openSession(*model, options);
    Sampler sampler(samplerOptions);
    const SoakFigures figures = soak(*session, sampler, tokens, json);
    const int64_t growth = figures.rssEnd - figures.rssStart;
    if (json) {
        nlohmann::ordered_json report = {
            {"tokens", figures.tokens},
            {"invariant_violations", figures.violations},
            {"warmup_tokens", warmupTokens(tokens)},
            {"rss_start_bytes", figures.rssStart},
            {"rss_end_bytes", figures.rssEnd},
            {"rss_growth_bytes", growth},
            {"peak_rss_bytes", peakRssBytes()},
            {"tokens_per_s", tokensPerSecond(figures.tokens, figures.seconds)},
            {"evictions", session->cache().evictions()},
        };
        report.update(describeCache(*session));
        printJson(report);
    } else {
        std::cout << "soak: " << figures.tokens << " tokens, " << figures.violations
                  << " invariant violations, RSS growth " << growth << " bytes after "
                  << warmupTokens(tokens) << " warm-up tokens, "
                  << tokensPerSecond(figures.tokens, figures.seconds) << " tokens/s\n";
    }
    return figures.violations == 0 ? 0 : 1;
}

} // namespace sinkscope::cli
