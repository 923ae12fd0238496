// A session build's progress and its cancel (tool_chat.h BuildProgress): the block's sink
// prefill, then the transcript's tail, each reported from 0 to its total after every chunk; the
// same session as a build without progress; a cancel between chunks throws BuildCancelled and
// leaves the chat's tools and session as they were.
#include "session/tool_chat.h"
#include "tool_test_support.h"

#include <QtTest>

#include <memory>
#include <vector>

using namespace sinkscope;
using sinkscope::test::modelFromSpec;
using sinkscope::test::smallSpec;
using sinkscope::test::textAnswer;
using sinkscope::test::toolsFrom;

namespace {

constexpr const char* kTools = test::kPingStopTools;
constexpr const char* kOtherTools =
    R"([{"name":"reboot","parameters":{"type":"object","properties":{"host":{"type":"string"},"force":{"type":"boolean"}}}}])";
constexpr int kChunk = 8;

SessionOptions chunkedOptions() {
    SessionOptions options;
    options.recordHistory = true;
    options.kvWindow = 24;
    options.prefillChunk = kChunk;
    return options;
}

} // namespace

class TestBuildProgress : public QObject {
    Q_OBJECT
    std::unique_ptr<Model> m_model = modelFromSpec(smallSpec(true));

    // A chat with a conversation longer than the window, so that a rebuild replays W tokens.
    std::unique_ptr<ToolChat> chatWithTurns() const {
        auto chat = std::make_unique<ToolChat>(*m_model, chunkedOptions(), toolsFrom(kTools));
        chat->ask("Is the server up?", textAnswer(12));
        chat->ask("And the backup?", textAnswer(12));
        return chat;
    }

private slots:
    void reportsEachStageChunkByChunk() {
        const std::unique_ptr<ToolChat> chat = chatWithTurns();
        const ToolBlock block = chat->chatTemplate().toolBlock(toolsFrom(kOtherTools));
        const std::vector<int32_t> transcript = chat->conversation().transcriptTokens();
        QVERIFY(int(block.tokens.size()) > 2 * kChunk);
        QVERIFY(transcript.size() > 24);

        std::vector<BuildProgress> reports;
        const RebuiltSession rebuilt = rebuildSession(*m_model, chunkedOptions(), block, transcript,
                                                      {}, [&](const BuildProgress& progress) {
                                                          reports.push_back(progress);
                                                          return true;
                                                      });
        // Sinks 0, 8, 16, … total; then Transcript 0, 8, 16, 24.
        std::vector<BuildProgress> expected;
        const auto stage = [&](BuildStage which, int total) {
            for (int done = 0; done < total; done += kChunk)
                expected.push_back({which, done, total});
            expected.push_back({which, total, total});
        };
        stage(BuildStage::Sinks, int(block.tokens.size()));
        stage(BuildStage::Transcript, 24);
        QCOMPARE(reports.size(), expected.size());
        for (size_t i = 0; i < reports.size(); ++i) {
            QCOMPARE(reports[i].stage, expected[i].stage);
            QCOMPARE(reports[i].done, expected[i].done);
            QCOMPARE(reports[i].total, expected[i].total);
        }
        // Reporting changes nothing: the same tokens as a build that reports nothing.
        const RebuiltSession quiet = rebuildSession(*m_model, chunkedOptions(), block, transcript);
        QCOMPARE(rebuilt.session->history(), quiet.session->history());
        QCOMPARE(rebuilt.session->cache().sinksUsed(), quiet.session->cache().sinksUsed());
        QCOMPARE(rebuilt.report.replayedTokens, 24);
    }

    void cancelDuringTheSinksKeepsTheToolsInForce() {
        const std::unique_ptr<ToolChat> chat = chatWithTurns();
        const Session* sessionBefore = &chat->session();
        const std::vector<int32_t> historyBefore = chat->session().history();
        const std::vector<int32_t> blockBefore = chat->toolBlock().tokens;
        const std::vector<int32_t> transcriptBefore = chat->conversation().transcriptTokens();

        int reports = 0;
        const auto cancelAfterOneChunk = [&](const BuildProgress& progress) {
            ++reports;
            return !(progress.stage == BuildStage::Sinks && progress.done >= kChunk);
        };
        QVERIFY_THROWS_EXCEPTION(BuildCancelled, chat->replaceTools(toolsFrom(kOtherTools), "", {},
                                                                    cancelAfterOneChunk));
        QCOMPARE(reports, 2); // the stage's start, then its first chunk: stopped there
        QCOMPARE(&chat->session(), sessionBefore);
        QCOMPARE(chat->session().history(), historyBefore);
        QCOMPARE(chat->toolBlock().tokens, blockBefore);
        QCOMPARE(chat->toolBlock().tools.front().name, std::string("ping"));
        QCOMPARE(chat->conversation().transcriptTokens(), transcriptBefore);

        // The chat goes on under the old tools.
        chat->ask("Anything else?", textAnswer(12));
        QCOMPARE(chat->toolBlock().tools.front().name, std::string("ping"));
        QVERIFY(chat->conversation().transcriptTokens().size() > transcriptBefore.size());
    }

    void cancelDuringTheReplayThrowsToo() {
        const std::unique_ptr<ToolChat> chat = chatWithTurns();
        const std::vector<int32_t> historyBefore = chat->session().history();
        QVERIFY_THROWS_EXCEPTION(
            BuildCancelled,
            chat->replaceTools(toolsFrom(kOtherTools), "", {}, [](const BuildProgress& progress) {
                return progress.stage != BuildStage::Transcript;
            }));
        QCOMPARE(chat->session().history(), historyBefore);
        QCOMPARE(chat->toolBlock().tools.front().name, std::string("ping"));
    }

    void aNewChatCancelledBeforeItsFirstToken() {
        QVERIFY_THROWS_EXCEPTION(
            BuildCancelled, ToolChat(*m_model, chunkedOptions(), toolsFrom(kTools), {}, {}, {},
                                     std::nullopt, {}, [](const BuildProgress&) { return false; }));
    }
};

QTEST_MAIN(TestBuildProgress)
#include "test_build_progress.moc"
