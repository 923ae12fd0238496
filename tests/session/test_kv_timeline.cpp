// The session's KV write log (memory/kv_timeline.h): one write per token fed, prefill chunks and
// single feeds alike, each with its slot and the ring occupant it evicted, checked against a
// shadow of the cache rebuilt from the log and against the cache itself; a capped log keeps the
// newest writes and the counts of those it dropped; a session without a capacity logs nothing.
#include "session/session.h"
#include "synthetic_model_support.h"

#include <QtTest>

#include <map>
#include <memory>
#include <vector>

using namespace sinkscope;

namespace {

SessionOptions loggedOptions(size_t capacity) {
    SessionOptions options;
    options.kvWindow = 8;
    options.sinks = SinkMode::FirstN;
    options.firstN = 4;
    options.prefillChunk = 5;
    options.timelineCapacity = capacity;
    return options;
}

// 30 prompt tokens in chunks, then 20 fed one by one (as decoding feeds them).
void run(Session& session) {
    std::vector<int32_t> prompt;
    for (int i = 0; i < 30; ++i)
        prompt.push_back(3 + (i * 37) % 400);
    session.prefill(prompt);
    for (int i = 0; i < 20; ++i)
        session.feed(5 + i);
}

} // namespace

class TestKvTimeline : public QObject {
    Q_OBJECT
    std::unique_ptr<Model> m_model = test::modelFromSpec();

private slots:
    void logsEveryWriteWithWhatItEvicted() {
        Session session(*m_model, loggedOptions(1000));
        run(session);
        const KvTimeline& timeline = session.timeline();
        QCOMPARE(int64_t(timeline.size()), session.position());
        QCOMPARE(timeline.dropped(), int64_t(0));
        const int sinkSlots = session.cache().shape().sinkSlots;
        std::map<int, KvWrite> shadow; // slot -> its last write
        KvCounts counts;
        for (size_t i = 0; i < timeline.size(); ++i) {
            const KvWrite& write = timeline[i];
            QCOMPARE(write.position, int64_t(i));
            QCOMPARE(write.sink, write.slot < sinkSlots);
            QCOMPARE(write.sink, write.position < 4); // first-N sinks
            const auto previous = shadow.find(write.slot);
            if (previous == shadow.end()) {
                QCOMPARE(write.evictedPosition, int64_t(-1));
                QCOMPARE(write.evictedToken, -1);
            } else {
                QVERIFY(!write.sink); // sinks are never written twice
                QCOMPARE(write.evictedPosition, previous->second.position);
                QCOMPARE(write.evictedToken, previous->second.token);
                QCOMPARE(write.position - write.evictedPosition, int64_t(8)); // W writes back
            }
            shadow[write.slot] = write;
            counts.add(write);
        }
        QCOMPARE(counts.evictions, session.cache().evictions());
        QCOMPARE(counts.sinks, int64_t(session.cache().sinksUsed()));
        QCOMPARE(counts.ringWrites, session.cache().ringWrites());
        QCOMPARE(counts.windowTokens(), int64_t(8));
        QVERIFY(counts.evictions > 0);
        for (const auto& [slot, write] : shadow) {
            const SlotInfo& info = session.cache().slotInfos()[size_t(slot)];
            QCOMPARE(info.position, write.position);
            QCOMPARE(info.token, write.token);
        }
        session.reset();
        QCOMPARE(session.timeline().size(), size_t(0));
    }

    void aCappedLogKeepsTheNewestAndCountsTheRest() {
        Session full(*m_model, loggedOptions(1000));
        Session capped(*m_model, loggedOptions(10));
        run(full);
        run(capped);
        const KvTimeline& log = capped.timeline();
        QCOMPARE(log.size(), size_t(10));
        QCOMPARE(log.dropped(), int64_t(40));
        for (size_t i = 0; i < log.size(); ++i) {
            QCOMPARE(log[i].position, full.timeline()[40 + i].position);
            QCOMPARE(log[i].slot, full.timeline()[40 + i].slot);
            QCOMPARE(log[i].evictedPosition, full.timeline()[40 + i].evictedPosition);
        }
        KvCounts counts = log.droppedCounts();
        for (size_t i = 0; i < log.size(); ++i)
            counts.add(log[i]);
        QCOMPARE(counts.evictions, capped.cache().evictions());
        QCOMPARE(counts.sinks, int64_t(capped.cache().sinksUsed()));
    }

    void noCapacityLogsNothing() {
        Session session(*m_model, loggedOptions(0));
        run(session);
        QCOMPARE(session.timeline().size(), size_t(0));
        QCOMPARE(session.timeline().dropped(), int64_t(0));
    }
};

QTEST_MAIN(TestKvTimeline)
#include "test_kv_timeline.moc"
