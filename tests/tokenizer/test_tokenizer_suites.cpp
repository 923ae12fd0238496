// llama.cpp's own tokenizer suites (shared/reference/tokenizers): every text of each vocabulary
// must give exactly the ids llama.cpp's test-tokenizer-0 expects (no BOS, special tokens not
// parsed), and decode back to itself; plus the encoding speed on a 4k-token text.
#include <QtTest>

#include "test_support.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_support.h"

#include <QElapsedTimer>

#include <sstream>

using namespace sinkscope;
using sinkscope::test::Ids;

namespace {

struct SuiteCase {
    std::string text;
    Ids expected;
};

QString vocabPath(const QString& name) {
    return test::sharedPath("reference/tokenizers/ggml-vocab-" + name + ".gguf");
}

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// As test-tokenizer-0 reads them: the .inp texts are separated by "\n__ggml_vocab_test__\n"
// (the last one ends with it), the .out holds one line of space-separated ids per text.
std::vector<SuiteCase> readSuite(const QString& name) {
    const std::string input = readAll(vocabPath(name) + ".inp").toStdString();
    const std::string output = readAll(vocabPath(name) + ".out").toStdString();
    const std::string separator = "\n__ggml_vocab_test__\n";
    std::vector<SuiteCase> cases;
    for (size_t pos = 0; pos < input.size();) {
        const size_t next = input.find(separator, pos);
        cases.push_back({input.substr(pos, next - pos), {}});
        if (next == std::string::npos) break;
        pos = next + separator.size();
    }
    std::istringstream lines(output);
    size_t index = 0;
    for (std::string line; std::getline(lines, line); ++index) {
        if (index >= cases.size()) return {}; // more lines than texts: an unusable suite
        std::istringstream ids(line);
        for (int32_t id = 0; ids >> id;)
            cases[index].expected.push_back(id);
    }
    if (index != cases.size()) return {};
    return cases;
}

std::optional<Tokenizer> loadVocab(const QString& name, std::string& error) {
    const auto file = GgufFile::open(vocabPath(name).toStdString(), error);
    if (!file) return std::nullopt;
    return Tokenizer::fromGguf(*file, error);
}

QString shown(const std::string& text) {
    return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()))
        .replace('\n', "\\n")
        .replace('\t', "\\t");
}

void addSuiteRows() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("model"); // TokenizerModel
    QTest::addColumn<QString>("family");
    const int bpe = static_cast<int>(TokenizerModel::BytePairEncoding);
    const int spm = static_cast<int>(TokenizerModel::SentencePiece);
    QTest::newRow("gpt-2") << "gpt-2" << bpe << "gpt2";
    QTest::newRow("starcoder") << "starcoder" << bpe << "starcoder";
    QTest::newRow("deepseek-llm") << "deepseek-llm" << bpe << "deepseek-llm";
    QTest::newRow("falcon") << "falcon" << bpe << "falcon";
    QTest::newRow("llama-spm") << "llama-spm" << spm << "";
    QTest::newRow("phi-3") << "phi-3" << spm << "";
}

#define REQUIRE_SUITE(name)                                                                        \
    do {                                                                                           \
        if (!QFileInfo::exists(vocabPath(name)))                                                   \
            QSKIP(qPrintable("llama.cpp's suite not found at " + vocabPath(name) +                 \
                             " (set SINKSCOPE_SHARED)"));                                          \
    } while (0)

} // namespace

class TestTokenizerSuites : public QObject {
    Q_OBJECT

private slots:
    void matchesLlamaCpp_data() { addSuiteRows(); }
    void matchesLlamaCpp();
    void roundTrip_data() { addSuiteRows(); }
    void roundTrip();
    void encodesQuickly_data() { addSuiteRows(); }
    void encodesQuickly();
};

void TestTokenizerSuites::matchesLlamaCpp() {
    QFETCH(QString, name);
    QFETCH(int, model);
    QFETCH(QString, family);
    REQUIRE_SUITE(name);
    std::string error;
    const auto tokenizer = loadVocab(name, error);
    QVERIFY2(tokenizer, error.c_str());
    QCOMPARE(static_cast<int>(tokenizer->model()), model);
    QVERIFY(tokenizer->warnings().empty());
    if (tokenizer->preTokenizer())
        QCOMPARE(QString::fromStdString(std::string(tokenizer->preTokenizer()->family())), family);
    const std::vector<SuiteCase> cases = readSuite(name);
    QVERIFY2(cases.size() >= 40, "the .inp and .out files do not hold the same number of tests");
    int failed = 0;
    for (const SuiteCase& suiteCase : cases) {
        const Ids ids = tokenizer->encode(suiteCase.text, false, false);
        if (ids == suiteCase.expected) continue;
        ++failed;
        qWarning("'%s': got %s, llama.cpp %s", qPrintable(shown(suiteCase.text)),
                 QTest::toString(ids), QTest::toString(suiteCase.expected));
    }
    QVERIFY2(failed == 0,
             qPrintable(QString("%1 of %2 texts differ").arg(failed).arg(cases.size())));
}

// Every suite text decodes back to itself (SentencePiece: without the space prefix it adds).
void TestTokenizerSuites::roundTrip() {
    QFETCH(QString, name);
    QFETCH(int, model);
    REQUIRE_SUITE(name);
    std::string error;
    const auto tokenizer = loadVocab(name, error);
    QVERIFY2(tokenizer, error.c_str());
    const bool spm = model == static_cast<int>(TokenizerModel::SentencePiece);
    for (const SuiteCase& suiteCase : readSuite(name)) {
        const Ids ids = tokenizer->encode(suiteCase.text, false, false);
        QCOMPARE(tokenizer->decode(ids, spm), suiteCase.text);
    }
}

// Each suite's texts repeated to at least 4096 tokens (mixed English, code and Unicode) through
// its real vocabulary (DeepSeek's has 2,400 user-defined tokens to cut out); the bound is for
// optimized builds (a sanitized Debug build runs about ten times slower).
void TestTokenizerSuites::encodesQuickly() {
    QFETCH(QString, name);
    QFETCH(int, model);
    REQUIRE_SUITE(name);
    std::string error;
    const auto tokenizer = loadVocab(name, error);
    QVERIFY2(tokenizer, error.c_str());
    std::string text;
    const std::vector<SuiteCase> cases = readSuite(name);
    while (tokenizer->encode(text, false).size() < 4096) {
        for (const SuiteCase& suiteCase : cases)
            text += suiteCase.text + "\n";
    }
#ifdef SINKSCOPE_SANITIZED
    constexpr qint64 kBudgetUs = 500'000;
#else
    constexpr qint64 kBudgetUs = 50'000;
#endif
    QElapsedTimer timer;
    timer.start();
    const Ids ids = tokenizer->encode(text, false);
    const qint64 elapsedUs = timer.nsecsElapsed() / 1000;
    qInfo("%zu tokens (%zu bytes) in %lld us", ids.size(), text.size(), elapsedUs);
    QVERIFY2(elapsedUs < kBudgetUs, qPrintable(QString("took %1 us").arg(elapsedUs)));
    QCOMPARE(tokenizer->decode(ids, model == static_cast<int>(TokenizerModel::SentencePiece)),
             text);
}

QTEST_GUILESS_MAIN(TestTokenizerSuites)
#include "test_tokenizer_suites.moc"
