// Reading tokenizers from GGUF metadata (tokenizer/gguf_vocabulary.h): llama.cpp's defaults for
// both models, one hand-made file per failure mode, the pre-tokenizer warnings, and a vocabulary
// file without tensors read from disk.
#include <QtTest>

#include "tokenizer/tokenizer.h"
#include "tokenizer_test_support.h"

#include <QTemporaryDir>

#include <algorithm>
#include <functional>

using namespace sinkscope;
using sinkscope::test::bytesOf;
using sinkscope::test::Ids;
using sinkscope::test::parseGguf;

namespace {

using Edit = std::function<void(GgufWriter&)>;
using Keys = std::initializer_list<std::string_view>;

constexpr std::string_view kSpace = "\xE2\x96\x81"; // U+2581, how SentencePiece stores ' '

std::string withMarker(std::string_view text) {
    return std::string(kSpace) + std::string(text);
}

// Writes `keys` in order, skipping those in `omit` (a GGUF file must not repeat a key), then
// `edit`'s keys.
QByteArray fileOf(const std::vector<std::pair<std::string_view, Edit>>& keys, const Edit& edit,
                  Keys omit) {
    GgufWriter writer;
    for (const auto& [key, write] : keys)
        if (std::find(omit.begin(), omit.end(), key) == omit.end()) write(writer);
    edit(writer);
    return bytesOf(writer);
}

// A valid five-token SentencePiece vocabulary.
QByteArray spmFile(const Edit& edit, Keys omit = {}) {
    return fileOf({{"tokenizer.ggml.model",
                    [](GgufWriter& w) { w.setString("tokenizer.ggml.model", "llama"); }},
                   {"tokenizer.ggml.tokens",
                    [](GgufWriter& w) {
                        w.setStringArray("tokenizer.ggml.tokens",
                                         {"<unk>", "<s>", "</s>", withMarker("a"), "a"});
                    }},
                   {"tokenizer.ggml.scores",
                    [](GgufWriter& w) {
                        w.setFloat32Array("tokenizer.ggml.scores", {0, 0, 0, -1, -2});
                    }},
                   {"tokenizer.ggml.token_type",
                    [](GgufWriter& w) {
                        w.setInt32Array("tokenizer.ggml.token_type", {2, 3, 3, 1, 1});
                    }}},
                  edit, omit);
}

// A valid twelve-token byte-level BPE vocabulary: id 11 (GPT-2's default BOS and EOS) is
// <|endoftext|>, a control token; the merges make "ab", "Ġa" and "abc".
const std::vector<std::string> kBpeTokens = {"a",   "b", "c", "Ġ", "ab", "Ġa",
                                             "abc", "d", "e", "f", "g",  "<|endoftext|>"};

QByteArray bpeFile(const Edit& edit, Keys omit = {}) {
    return fileOf({{"tokenizer.ggml.model",
                    [](GgufWriter& w) { w.setString("tokenizer.ggml.model", "gpt2"); }},
                   {"tokenizer.ggml.tokens",
                    [](GgufWriter& w) { w.setStringArray("tokenizer.ggml.tokens", kBpeTokens); }},
                   {"tokenizer.ggml.token_type",
                    [](GgufWriter& w) {
                        std::vector<int32_t> types(kBpeTokens.size(), 1);
                        types.back() = 3;
                        w.setInt32Array("tokenizer.ggml.token_type", types);
                    }},
                   {"tokenizer.ggml.merges",
                    [](GgufWriter& w) {
                        w.setStringArray("tokenizer.ggml.merges", {"a b", "Ġ a", "ab c"});
                    }}},
                  edit, omit);
}

std::optional<Tokenizer> load(const QByteArray& bytes, std::string& error) {
    const auto file = parseGguf(bytes);
    if (!file) {
        error = "the file does not parse";
        return std::nullopt;
    }
    return Tokenizer::fromGguf(*file, error);
}

} // namespace

class TestTokenizerGguf : public QObject {
    Q_OBJECT

private slots:
    void ggufDefaults();
    void ggufSettings();
    void ggufErrors_data();
    void ggufErrors();

    void bpeDefaults();
    void bpeSettings();
    void bpeAddBosDefault_data();
    void bpeAddBosDefault();
    void bpeErrors_data();
    void bpeErrors();
    void preTokenizerWarnings_data();
    void preTokenizerWarnings();
    void vocabularyOnlyFile();
};

// Only model and tokens: scores 0, types Normal, ids 1/2/0, BOS and space prefix on.
void TestTokenizerGguf::ggufDefaults() {
    GgufWriter writer;
    writer.setString("tokenizer.ggml.model", "llama");
    writer.setStringArray("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a"});
    const auto file = parseGguf(bytesOf(writer));
    QVERIFY(file);
    std::string error;
    const auto tokenizer = Tokenizer::fromGguf(*file, error);
    QVERIFY2(tokenizer, error.c_str());
    const Vocabulary& vocab = tokenizer->vocabulary();
    QCOMPARE(tokenizer->size(), 4);
    QCOMPARE(vocab.pieces[3], std::string("a"));
    QCOMPARE(vocab.scores, (std::vector<float>{0, 0, 0, 0}));
    QCOMPARE(vocab.types, std::vector<TokenType>(4, TokenType::Normal));
    QCOMPARE(vocab.bos, 1);
    QCOMPARE(vocab.eos, 2);
    QCOMPARE(vocab.unk, 0);
    QVERIFY(vocab.addBos);
    QVERIFY(vocab.addSpacePrefix);
}

void TestTokenizerGguf::ggufSettings() {
    const auto file = parseGguf(spmFile([](GgufWriter& writer) {
        writer.setUint32("tokenizer.ggml.bos_token_id", 4);
        writer.setUint32("tokenizer.ggml.eos_token_id", 3);
        writer.setUint32("tokenizer.ggml.unknown_token_id", 2);
        writer.setBool("tokenizer.ggml.add_bos_token", false);
        writer.setBool("tokenizer.ggml.add_space_prefix", false);
    }));
    QVERIFY(file);
    std::string error;
    const auto tokenizer = Tokenizer::fromGguf(*file, error);
    QVERIFY2(tokenizer, error.c_str());
    const Vocabulary& vocab = tokenizer->vocabulary();
    QCOMPARE(vocab.pieces,
             (std::vector<std::string>{"<unk>", "<s>", "</s>", withMarker("a"), "a"}));
    QCOMPARE(vocab.scores, (std::vector<float>{0, 0, 0, -1, -2}));
    QCOMPARE(vocab.types,
             (std::vector<TokenType>{TokenType::Unknown, TokenType::Control, TokenType::Control,
                                     TokenType::Normal, TokenType::Normal}));
    QCOMPARE(tokenizer->bos(), 4);
    QCOMPARE(tokenizer->eos(), 3);
    QCOMPARE(vocab.unk, 2);
    QVERIFY(!tokenizer->addBos());
    QVERIFY(!vocab.addSpacePrefix);
    QCOMPARE(tokenizer->encode("a", false), Ids{4}); // no prefix: "a", not "▁a"
}

// One hand-made file per failure mode; the message must name what is wrong.
void TestTokenizerGguf::ggufErrors_data() {
    QTest::addColumn<QByteArray>("file");
    QTest::addColumn<QString>("expectedError");
    using Edit = std::function<void(GgufWriter&)>;
    const auto row = [](const char* name, const Edit& edit, const char* expected,
                        std::initializer_list<std::string_view> omit = {}) {
        QTest::newRow(name) << spmFile(edit, omit) << QString(expected);
    };
    const auto nothing = [](GgufWriter&) {};
    row("no model", nothing, "tokenizer.ggml.model is missing", {"tokenizer.ggml.model"});
    row("bert model", [](GgufWriter& w) { w.setString("tokenizer.ggml.model", "bert"); },
        "tokenizer model \"bert\" is not supported (only \"llama\", SentencePiece, and \"gpt2\"",
        {"tokenizer.ggml.model"});
    row("model not a string", [](GgufWriter& w) { w.setUint32("tokenizer.ggml.model", 1); },
        "tokenizer.ggml.model", {"tokenizer.ggml.model"});
    row("no tokens", nothing, "tokenizer.ggml.tokens is missing",
        {"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"});
    row("tokens not strings",
        [](GgufWriter& w) {
            w.setInt32Array("tokenizer.ggml.tokens", {1, 2, 3, 4, 5});
        },
        "tokenizer.ggml.tokens is missing or not an array of strings", {"tokenizer.ggml.tokens"});
    row("empty vocabulary", [](GgufWriter& w) { w.setStringArray("tokenizer.ggml.tokens", {}); },
        "tokenizer.ggml.tokens is empty",
        {"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"});
    row("scores short",
        [](GgufWriter& w) {
            w.setFloat32Array("tokenizer.ggml.scores", {0, 0});
        },
        "tokenizer.ggml.scores has 2 entries but tokenizer.ggml.tokens has 5",
        {"tokenizer.ggml.scores"});
    row("scores not floats",
        [](GgufWriter& w) {
            w.setStringArray("tokenizer.ggml.scores", {"x", "y", "z", "u", "v"});
        },
        "tokenizer.ggml.scores is not an array of floats", {"tokenizer.ggml.scores"});
    row("types long",
        [](GgufWriter& w) {
            w.setInt32Array("tokenizer.ggml.token_type", {1, 1, 1, 1, 1, 1});
        },
        "tokenizer.ggml.token_type has 6 entries but tokenizer.ggml.tokens has 5",
        {"tokenizer.ggml.token_type"});
    row("types not integers",
        [](GgufWriter& w) {
            w.setFloat32Array("tokenizer.ggml.token_type", {1, 1, 1, 1, 1});
        },
        "tokenizer.ggml.token_type is not an array of integers", {"tokenizer.ggml.token_type"});
    row(
        "bos outside", [](GgufWriter& w) { w.setUint32("tokenizer.ggml.bos_token_id", 5); },
        "tokenizer.ggml.bos_token_id = 5 is outside the vocabulary of 5 tokens");
    row(
        "eos negative", [](GgufWriter& w) { w.setInt32("tokenizer.ggml.eos_token_id", -1); },
        "tokenizer.ggml.eos_token_id = -1 is outside the vocabulary");
    row(
        "unk none",
        [](GgufWriter& w) { w.setUint32("tokenizer.ggml.unknown_token_id", 0xFFFFFFFFu); },
        "tokenizer.ggml.unknown_token_id = 4294967295 is outside the vocabulary");
    row(
        "bos not an integer",
        [](GgufWriter& w) { w.setString("tokenizer.ggml.bos_token_id", "1"); },
        "tokenizer.ggml.bos_token_id is not an integer");
    row(
        "add_bos not bool",
        [](GgufWriter& w) { w.setString("tokenizer.ggml.add_bos_token", "yes"); },
        "tokenizer.ggml.add_bos_token is not a boolean");
    row(
        "add_space_prefix not bool",
        [](GgufWriter& w) { w.setString("tokenizer.ggml.add_space_prefix", "no"); },
        "tokenizer.ggml.add_space_prefix is not a boolean");
}

void TestTokenizerGguf::ggufErrors() {
    QFETCH(QByteArray, file);
    QFETCH(QString, expectedError);
    const auto gguf = parseGguf(file);
    QVERIFY(gguf);
    std::string error;
    QVERIFY(!Tokenizer::fromGguf(*gguf, error));
    QVERIFY2(QString::fromStdString(error).contains(expectedError), error.c_str());
}

// Model, tokens and merges only: llama.cpp's gpt2 defaults, BOS and EOS 11, no unknown token,
// no BOS added, no space prefix; the missing pre-tokenizer is a warning, not an error.
void TestTokenizerGguf::bpeDefaults() {
    std::string error;
    const auto tokenizer = load(bpeFile([](GgufWriter&) {}), error);
    QVERIFY2(tokenizer, error.c_str());
    QCOMPARE(tokenizer->model(), TokenizerModel::BytePairEncoding);
    QCOMPARE(tokenizer->size(), 12);
    QCOMPARE(tokenizer->bos(), 11);
    QCOMPARE(tokenizer->eos(), 11);
    QCOMPARE(tokenizer->vocabulary().unk, -1);
    QVERIFY(!tokenizer->addBos());
    QVERIFY(!tokenizer->vocabulary().addSpacePrefix);
    QCOMPARE(tokenizer->vocabulary().merges, (std::vector<std::string>{"a b", "Ġ a", "ab c"}));
    QCOMPARE(tokenizer->type(11), TokenType::Control);
    QCOMPARE(tokenizer->warnings(),
             (std::vector<std::string>{
                 "tokenizer.ggml.pre is missing: using the default pre-tokenizer"}));
    QVERIFY(tokenizer->preTokenizer());
    QCOMPARE(tokenizer->preTokenizer()->family(), std::string_view("default"));
    QCOMPARE(tokenizer->encode("abc ab", true), (Ids{11, 6, 3, 4})); // [BOS] abc Ġ ab
}

void TestTokenizerGguf::bpeSettings() {
    std::string error;
    const auto tokenizer = load(bpeFile([](GgufWriter& w) {
                                    w.setString("tokenizer.ggml.pre", "qwen2");
                                    w.setUint32("tokenizer.ggml.bos_token_id", 7);
                                    w.setUint32("tokenizer.ggml.eos_token_id", 11);
                                    w.setUint32("tokenizer.ggml.unknown_token_id", 8);
                                    w.setBool("tokenizer.ggml.add_bos_token", true);
                                    w.setBool("tokenizer.ggml.add_space_prefix", true);
                                }),
                                error);
    QVERIFY2(tokenizer, error.c_str());
    QCOMPARE(tokenizer->bos(), 7);
    QCOMPARE(tokenizer->eos(), 11);
    QCOMPARE(tokenizer->vocabulary().unk, 8);
    QVERIFY(tokenizer->addBos());
    QVERIFY(!tokenizer->vocabulary().addSpacePrefix); // llama.cpp's BPE never adds one
    QVERIFY(tokenizer->warnings().empty());
    QCOMPARE(tokenizer->preTokenizer()->family(), std::string_view("qwen2"));
}

// tokenizer.ggml.add_bos_token's default follows the pre-tokenizer, as in llama.cpp: only the
// llama3 family adds BOS; the key, when present, wins.
void TestTokenizerGguf::bpeAddBosDefault_data() {
    QTest::addColumn<QString>("pre");
    QTest::addColumn<int>("addBosKey"); // -1: absent
    QTest::addColumn<bool>("addBos");
    QTest::newRow("llama-bpe") << "llama-bpe" << -1 << true;
    QTest::newRow("llama3") << "llama3" << -1 << true;
    QTest::newRow("llama-bpe, key false") << "llama-bpe" << 0 << false;
    QTest::newRow("qwen2") << "qwen2" << -1 << false;
    QTest::newRow("smollm") << "smollm" << -1 << false;
    QTest::newRow("gpt-2") << "gpt-2" << -1 << false;
    QTest::newRow("gpt-2, key true") << "gpt-2" << 1 << true;
    QTest::newRow("dbrx (llama3's regex, not its flags)") << "dbrx" << -1 << false;
}

void TestTokenizerGguf::bpeAddBosDefault() {
    QFETCH(QString, pre);
    QFETCH(int, addBosKey);
    QFETCH(bool, addBos);
    std::string error;
    const auto tokenizer = load(bpeFile([&](GgufWriter& w) {
                                    w.setString("tokenizer.ggml.pre", pre.toStdString());
                                    if (addBosKey >= 0)
                                        w.setBool("tokenizer.ggml.add_bos_token", addBosKey == 1);
                                }),
                                error);
    QVERIFY2(tokenizer, error.c_str());
    QCOMPARE(tokenizer->addBos(), addBos);
}

// One hand-made byte-level BPE file per failure mode.
void TestTokenizerGguf::bpeErrors_data() {
    QTest::addColumn<QByteArray>("file");
    QTest::addColumn<QString>("expectedError");
    const auto merges = [](std::vector<std::string> lines) {
        return [lines](GgufWriter& w) { w.setStringArray("tokenizer.ggml.merges", lines); };
    };
    const auto row = [](const char* name, const QByteArray& file, const char* expected) {
        QTest::newRow(name) << file << QString(expected);
    };
    const Keys noMerges = {"tokenizer.ggml.merges"};
    row("no merges", bpeFile([](GgufWriter&) {}, noMerges),
        "tokenizer.ggml.merges is missing: a gpt2 (byte-level BPE) vocabulary needs them");
    row("merges not strings",
        bpeFile(
            [](GgufWriter& w) {
                w.setInt32Array("tokenizer.ggml.merges", {1, 2});
            },
            noMerges),
        "tokenizer.ggml.merges is not an array of strings");
    row("merge naming a missing token", bpeFile(merges({"a b", "a z"}), noMerges),
        "tokenizer.ggml.merges[1] = \"a z\" names \"z\", which is not a token");
    row("merge naming a missing left token", bpeFile(merges({"Ġb c"}), noMerges),
        "tokenizer.ggml.merges[0] = \"Ġb c\" names \"Ġb\", which is not a token");
    row("merge making no token", bpeFile(merges({"a b", "b c"}), noMerges),
        "tokenizer.ggml.merges[1] = \"b c\" makes \"bc\", which is not a token");
    row("merge without a space", bpeFile(merges({"ab"}), noMerges),
        "tokenizer.ggml.merges[0] = \"ab\" is not two tokens separated by a space");
    row("merge with nothing after the space", bpeFile(merges({"a "}), noMerges),
        "tokenizer.ggml.merges[0] = \"a \" is not two tokens separated by a space");
    row("merge with a line break", bpeFile(merges({"a\nb c"}), noMerges),
        "tokenizer.ggml.merges[0] = \"a?b c\" names \"a?b\", which is not a token");
    row("pre not a string", bpeFile([](GgufWriter& w) { w.setUint32("tokenizer.ggml.pre", 2); }),
        "tokenizer.ggml.pre is not a string");
    row("bos outside",
        bpeFile([](GgufWriter& w) { w.setUint32("tokenizer.ggml.bos_token_id", 12); }),
        "tokenizer.ggml.bos_token_id = 12 is outside the vocabulary of 12 tokens");
    row("eos outside",
        bpeFile([](GgufWriter& w) { w.setInt32("tokenizer.ggml.eos_token_id", -3); }),
        "tokenizer.ggml.eos_token_id = -3 is outside the vocabulary of 12 tokens");
    row("unk outside",
        bpeFile([](GgufWriter& w) { w.setUint32("tokenizer.ggml.unknown_token_id", 99); }),
        "tokenizer.ggml.unknown_token_id = 99 is outside the vocabulary of 12 tokens");
    row("default bos outside a small vocabulary",
        bpeFile(
            [](GgufWriter& w) {
                w.setStringArray("tokenizer.ggml.tokens", {"a", "b", "ab"});
                w.setStringArray("tokenizer.ggml.merges", {"a b"});
            },
            {"tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.merges"}),
        "tokenizer.ggml.bos_token_id is absent and its default 11 is outside the vocabulary of 3 "
        "tokens");
}

void TestTokenizerGguf::bpeErrors() {
    QFETCH(QByteArray, file);
    QFETCH(QString, expectedError);
    std::string error;
    QVERIFY(!load(file, error));
    QVERIFY2(QString::fromStdString(error).contains(expectedError), error.c_str());
}

// A name llama.cpp does not know, or whose split is not implemented here, gives a warning and the
// default pre-tokenizer, which then splits exactly as "default" does.
void TestTokenizerGguf::preTokenizerWarnings_data() {
    QTest::addColumn<QString>("pre");
    QTest::addColumn<QString>("warning");
    QTest::newRow("unknown") << "made-up"
                             << "unknown pre-tokenizer \"made-up\": using the default one";
    QTest::newRow("not implemented")
        << "tekken"
        << "pre-tokenizer \"tekken\" is not supported: using the default one";
    QTest::newRow("line break in the name")
        << "a\nb"
        << "unknown pre-tokenizer \"a?b\": using the default one";
    QTest::newRow("empty") << ""
                           << "tokenizer.ggml.pre is missing: using the default pre-tokenizer";
}

void TestTokenizerGguf::preTokenizerWarnings() {
    QFETCH(QString, pre);
    QFETCH(QString, warning);
    std::string error;
    const auto fallback =
        load(bpeFile([&](GgufWriter& w) { w.setString("tokenizer.ggml.pre", pre.toStdString()); }),
             error);
    QVERIFY2(fallback, error.c_str());
    QCOMPARE(fallback->warnings(), std::vector<std::string>{warning.toStdString()});
    QCOMPARE(fallback->preTokenizer()->family(), std::string_view("default"));
    const auto reference =
        load(bpeFile([](GgufWriter& w) { w.setString("tokenizer.ggml.pre", "default"); }), error);
    QVERIFY2(reference, error.c_str());
    QVERIFY(reference->warnings().empty());
    for (const char* text : {"abc ab", "a1234b, c's d!!", "  \n\tab  "})
        QCOMPARE(fallback->encode(text, false), reference->encode(text, false));
}

// A vocabulary file has no tensors (llama.cpp's ggml-vocab-*.gguf): GgufFile opens it from disk
// and it loads as a tokenizer.
void TestTokenizerGguf::vocabularyOnlyFile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("vocab.gguf");
    const QByteArray bytes =
        bpeFile([](GgufWriter& w) { w.setString("tokenizer.ggml.pre", "gpt-2"); });
    QFile out(path);
    QVERIFY(out.open(QIODevice::WriteOnly));
    QCOMPARE(out.write(bytes), bytes.size());
    out.close();
    std::string error;
    const auto file = GgufFile::open(path.toStdString(), error);
    QVERIFY2(file, error.c_str());
    QVERIFY(file->tensors().empty());
    const auto tokenizer = Tokenizer::fromGguf(*file, error);
    QVERIFY2(tokenizer, error.c_str());
    QCOMPARE(tokenizer->encode(" abc", false), (Ids{3, 6}));
}

QTEST_GUILESS_MAIN(TestTokenizerGguf)
#include "test_tokenizer_gguf.moc"
