// The byte-level BPE tokenizer: GPT-2's byte characters, merges by rank, llama3's whole-word
// tokens, missing byte characters, special tokens, pieces and round trips on vocabularies built
// here; and the exact ids llama.cpp gives for the synthetic Qwen2, Llama-3 and SmolLM models
// (shared/reference/models/llamacpp.json: default BOS handling, special tokens parsed).
#include <QtTest>

#include "test_support.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_support.h"

#include <algorithm>
#include <random>
#include <set>

using namespace sinkscope;
using sinkscope::test::Ids;

namespace {

struct Extra {
    std::string text;
    TokenType type = TokenType::Normal;
};

// Ids 0-255: the characters of bytes 0-255; then each merge's result, in order; then `extras`.
Vocabulary bpeVocabulary(const std::vector<std::string>& merges, const std::vector<Extra>& extras,
                         const std::string& pre = "gpt-2") {
    Vocabulary vocab;
    vocab.model = TokenizerModel::BytePairEncoding;
    vocab.preTokenizer = pre;
    vocab.addBos = false;
    vocab.addSpacePrefix = false;
    for (int byte = 0; byte < 256; ++byte)
        vocab.pieces.emplace_back(gpt2CharacterOf(static_cast<uint8_t>(byte)));
    for (const std::string& merge : merges) {
        const size_t space = merge.find(' ');
        const std::string joined = merge.substr(0, space) + merge.substr(space + 1);
        if (std::find(vocab.pieces.begin(), vocab.pieces.end(), joined) == vocab.pieces.end())
            vocab.pieces.push_back(joined);
    }
    vocab.types.assign(vocab.pieces.size(), TokenType::Normal);
    for (const Extra& extra : extras) {
        vocab.pieces.push_back(extra.text);
        vocab.types.push_back(extra.type);
    }
    vocab.merges = merges;
    vocab.bos = vocab.eos = 0;
    return vocab;
}

Ids idsOf(const Tokenizer& tokenizer, const QStringList& pieces) {
    Ids ids;
    for (const QString& piece : pieces)
        ids.push_back(tokenizer.findToken(piece.toStdString()).value_or(-1));
    return ids;
}

std::string randomBytes(std::mt19937& random, size_t length) {
    // Mostly text-like bytes, with multi-byte lead and continuation bytes mixed in.
    static constexpr std::string_view kAlphabet = "ab 1'\n\t.,s\xC3\xA9\xE2\x80\xFF";
    std::string text;
    for (size_t i = 0; i < length; ++i) {
        text.push_back(random() % 4 == 0 ? static_cast<char>(random() % 256)
                                         : kAlphabet[random() % kAlphabet.size()]);
    }
    return text;
}

const char* const kSyntheticModels[] = {"qwen2-tiny-F16.gguf", "llama3-tiny-F16.gguf",
                                        "smollm-tiny-F16.gguf"};

} // namespace

class TestBpeTokenizer : public QObject {
    Q_OBJECT

private slots:
    void byteCharacters();
    void mergesByRank_data();
    void mergesByRank();
    void wholeWordTokens();
    void missingByteCharacters();
    void specialTokens_data();
    void specialTokens();
    void pieces();
    void roundTripAnyBytes();
    void invalidVocabulary();

    void syntheticModels_data();
    void syntheticModels();
};

// bytes_to_unicode: printable bytes are themselves; the 68 others count up from U+0100.
void TestBpeTokenizer::byteCharacters() {
    QCOMPARE(gpt2CharacterOf('a'), std::string_view("a"));
    QCOMPARE(gpt2CharacterOf('!'), std::string_view("!"));
    QCOMPARE(gpt2CharacterOf(0x00), std::string_view("Ā")); // U+0100
    QCOMPARE(gpt2CharacterOf('\n'), std::string_view("Ċ")); // U+010A
    QCOMPARE(gpt2CharacterOf(' '), std::string_view("Ġ"));  // U+0120
    QCOMPARE(gpt2CharacterOf(0x7F), std::string_view("ġ")); // U+0121
    QCOMPARE(gpt2CharacterOf(0xA0), std::string_view("ł")); // U+0142
    QCOMPARE(gpt2CharacterOf(0xAD), std::string_view("Ń")); // U+0143
    QCOMPARE(gpt2CharacterOf(0xAE), std::string_view("®")); // itself
    QCOMPARE(gpt2CharacterOf(0xFF), std::string_view("ÿ"));
    std::set<std::string_view> distinct;
    std::string allBytes;
    std::string allCharacters;
    for (int byte = 0; byte < 256; ++byte) {
        allBytes.push_back(static_cast<char>(byte));
        allCharacters += gpt2CharacterOf(static_cast<uint8_t>(byte));
        distinct.insert(gpt2CharacterOf(static_cast<uint8_t>(byte)));
    }
    QCOMPARE(distinct.size(), size_t(256));
    QCOMPARE(gpt2BytesOf(allCharacters), allBytes);
    // Text that is no byte character (no encoding makes it) stays as it is: other characters, an
    // overlong form of "A", a stray byte whose value is that of ¡ (U+00A1).
    QCOMPARE(gpt2BytesOf("ĠxĠ中\xC1\x81\xA1"), std::string(" x 中\xC1\x81\xA1"));
}

// The lowest rank merges first (llama.cpp's bpe session), whatever the order of the pairs in
// the word; equal ranks (the same pair twice) merge the leftmost first.
void TestBpeTokenizer::mergesByRank_data() {
    QTest::addColumn<QStringList>("merges");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("ab before bc") << QStringList{"a b", "b c"} << "abc" << QStringList{"ab", "c"};
    QTest::newRow("bc before ab") << QStringList{"b c", "a b"} << "abc" << QStringList{"a", "bc"};
    QTest::newRow("leftmost of equal ranks")
        << QStringList{"a a"} << "aaa" << QStringList{"aa", "a"};
    QTest::newRow("merged pairs merge again")
        << QStringList{"a a", "aa aa"} << "aaaaa" << QStringList{"aaaa", "a"};
    QTest::newRow("each merge queues its neighbours")
        << QStringList{"b c", "a bc", "bc d", "abc d"} << "abcd" << QStringList{"abcd"};
    QTest::newRow("a queued pair goes stale")
        << QStringList{"b c", "a bc", "bc d"} << "abcd" << QStringList{"abc", "d"};
    QTest::newRow("duplicate line keeps its first rank")
        << QStringList{"a b", "b c", "a b"} << "abc" << QStringList{"ab", "c"};
    QTest::newRow("words merge apart")
        << QStringList{"Ġ a", "Ġa b", "a b"} << "ab ab" << QStringList{"ab", "Ġab"};
    QTest::newRow("a low rank wins inside the word")
        << QStringList{"Ġ a", "Ġa b", "a b"} << " ab" << QStringList{"Ġab"};
    QTest::newRow("a lower rank breaks the longer path")
        << QStringList{"a b", "Ġ a", "Ġa b"} << " ab" << QStringList{"Ġ", "ab"};
}

void TestBpeTokenizer::mergesByRank() {
    QFETCH(QStringList, merges);
    QFETCH(QString, text);
    QFETCH(QStringList, expected);
    std::vector<std::string> lines;
    for (const QString& merge : merges)
        lines.push_back(merge.toStdString());
    const Tokenizer tokenizer(bpeVocabulary(lines, {}));
    QCOMPARE(tokenizer.encode(text.toStdString(), false), idsOf(tokenizer, expected));
}

// llama3 vocabularies take a word that is a token as a whole, whatever the merges would make.
void TestBpeTokenizer::wholeWordTokens() {
    const std::vector<std::string> merges = {"a b"};
    const Tokenizer llama3(bpeVocabulary(merges, {{"abc"}}, "llama-bpe"));
    const Tokenizer gpt2(bpeVocabulary(merges, {{"abc"}}, "gpt-2"));
    QVERIFY(llama3.preTokenizer()->ignoresMerges());
    QCOMPARE(llama3.encode("abc", false), idsOf(llama3, {"abc"}));
    QCOMPARE(gpt2.encode("abc", false), idsOf(gpt2, {"ab", "c"}));
    // " abc" is one llama3 word, and "Ġabc" no token: the merges apply.
    QCOMPARE(llama3.encode(" abc", false), idsOf(llama3, {"Ġ", "ab", "c"}));
}

// A byte whose character is no token: llama.cpp looks up each byte of the character's UTF-8 as
// a one-byte token and drops those that are none ("z" vanishes; 0xFF, "ÿ" = C3 BF, becomes the
// token "\xC3").
void TestBpeTokenizer::missingByteCharacters() {
    Vocabulary vocab = bpeVocabulary({}, {{"\xC3"}});
    for (const char* missing : {"z", "ÿ"})
        *std::find(vocab.pieces.begin(), vocab.pieces.end(), missing) =
            std::string("<gone>") + missing;
    const Tokenizer tokenizer(vocab);
    QCOMPARE(tokenizer.encode("yz", false), idsOf(tokenizer, {"y"}));
    QCOMPARE(tokenizer.encode("\xFF", false), Ids{*tokenizer.findToken("\xC3")});
}

// Control tokens <|im_start|> and <|im_end|>, the user-defined <tool>; no space prefix anywhere.
void TestBpeTokenizer::specialTokens_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("parseSpecial");
    QTest::addColumn<QStringList>("expected"); // stored pieces
    QTest::addColumn<QString>("decoded");
    QTest::newRow("parsed") << "<|im_start|>ab<|im_end|>" << true
                            << QStringList{"<|im_start|>", "ab", "<|im_end|>"} << "ab";
    QTest::newRow("no prefix after a special")
        << "a<|im_end|> ab" << true << QStringList{"a", "<|im_end|>", "Ġab"} << "a ab";
    QTest::newRow("not parsed: characters")
        << "<|im_end|>" << false << QStringList{"<|", "im", "_", "end", "|>"} << "<|im_end|>";
    QTest::newRow("user-defined always")
        << "a<tool>b" << false << QStringList{"a", "<tool>", "b"} << "a<tool>b";
}

void TestBpeTokenizer::specialTokens() {
    QFETCH(QString, text);
    QFETCH(bool, parseSpecial);
    QFETCH(QStringList, expected);
    QFETCH(QString, decoded);
    const Tokenizer tokenizer(bpeVocabulary({"a b", "Ġ ab", "< |", "| >", "i m", "e n", "en d"},
                                            {{"<|im_start|>", TokenType::Control},
                                             {"<|im_end|>", TokenType::Control},
                                             {"<tool>", TokenType::UserDefined}}));
    const Ids ids = tokenizer.encode(text.toStdString(), false, parseSpecial);
    QCOMPARE(ids, idsOf(tokenizer, expected));
    QCOMPARE(tokenizer.decode(ids), decoded.toStdString());
}

void TestBpeTokenizer::pieces() {
    const Tokenizer tokenizer(bpeVocabulary({"Ġ a", "Ġa b"}, {{"<|endoftext|>", TokenType::Control},
                                                              {"<tool>", TokenType::UserDefined},
                                                              {"Ġunused", TokenType::Unused},
                                                              {"Ġbyte", TokenType::Byte},
                                                              {"中"}}));
    const auto piece = [&](const char* stored, bool showSpecial = false) {
        return tokenizer.piece(*tokenizer.findToken(stored), showSpecial);
    };
    QCOMPARE(piece("Ġab"), std::string(" ab"));
    QCOMPARE(piece("Ċ"), std::string("\n"));
    QCOMPARE(piece("ÿ"), std::string("\xFF"));
    QCOMPARE(piece("<|endoftext|>"), std::string());
    QCOMPARE(piece("<|endoftext|>", true), std::string("<|endoftext|>"));
    QCOMPARE(piece("<tool>"), std::string("<tool>"));
    QCOMPARE(piece("Ġunused", true), std::string()); // llama.cpp prints nothing for these
    QCOMPARE(piece("Ġbyte", true), std::string());
    QCOMPARE(piece("中"), std::string("中"));
    QCOMPARE(tokenizer.piece(-1), std::string());
    QCOMPARE(tokenizer.piece(tokenizer.size()), std::string());
    QCOMPARE(tokenizer.type(*tokenizer.findToken("<tool>")), TokenType::UserDefined);
}

// Any bytes, through every pre-tokenizer family: the ids decode to the text, and with special
// tokens parsed the pieces shown with their text do too.
void TestBpeTokenizer::roundTripAnyBytes() {
    std::mt19937 random(11);
    const std::vector<std::string> merges = {"Ġ a", "a b", "Ġa b", "Ġ Ġ", "1 1", "' s", "Ã ©"};
    const std::vector<Extra> extras = {{"<|x|>", TokenType::Control},
                                       {"<t>", TokenType::UserDefined}};
    for (const char* pre : {"default", "gpt-2", "llama-bpe", "qwen2", "smollm", "deepseek-llm",
                            "deepseek-coder", "falcon", "bloom", "viking", "dbrx"}) {
        const Tokenizer tokenizer(bpeVocabulary(merges, extras, pre));
        QVERIFY2(tokenizer.warnings().empty(), pre);
        for (int i = 0; i < 200; ++i) {
            std::string text = randomBytes(random, random() % 64);
            if (i % 3 == 0) text.insert(random() % (text.size() + 1), i % 2 ? "<|x|>" : "<t>");
            const Ids ids = tokenizer.encode(text, false);
            for (const int32_t id : ids)
                QVERIFY(id >= 0 && id < tokenizer.size());
            QCOMPARE(tokenizer.decode(ids), text);
            std::string shown;
            for (const int32_t id : tokenizer.encode(text, false, true))
                shown += tokenizer.piece(id, true);
            QCOMPARE(shown, text);
        }
    }
}

void TestBpeTokenizer::invalidVocabulary() {
    Vocabulary vocab = bpeVocabulary({"a b"}, {});
    vocab.merges.push_back("a q q");
    std::string error;
    QVERIFY(!Tokenizer::fromVocabulary(vocab, error));
    QCOMPARE(error, std::string("tokenizer.ggml.merges[1] = \"a q q\" names \"q q\", which is not "
                                "a token"));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Tokenizer{vocab});
}

// Every text of the reference's "tokenize" section of the F16 files (the quantized files share
// their vocabularies), with each model's default BOS handling and special tokens parsed.
void TestBpeTokenizer::syntheticModels_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QList<int>>("expected");
    const QJsonObject files =
        test::readJsonObject(test::sharedPath("reference/models/llamacpp.json"))["files"]
            .toObject();
    for (const char* model : kSyntheticModels) {
        const QJsonArray cases = files[model]["tokenize"].toArray();
        for (const QJsonValue& entry : cases) {
            QList<int> ids;
            for (const QJsonValue& id : entry["ids"].toArray())
                ids.push_back(id.toInt());
            const QString text = entry["text"].toString();
            QTest::addRow("%s: %s", model, qPrintable(text.left(40))) << model << text << ids;
        }
        if (cases.isEmpty())
            QTest::addRow("%s: no reference", model) << model << QString() << QList<int>();
    }
}

void TestBpeTokenizer::syntheticModels() {
    QFETCH(QString, model);
    QFETCH(QString, text);
    QFETCH(QList<int>, expected);
    const QString path = test::sharedPath("reference/models/" + model);
    if (!QFileInfo::exists(path))
        QSKIP(qPrintable("synthetic model not found at " + path + " (set SINKSCOPE_SHARED)"));
    QVERIFY2(!expected.isEmpty(), "llamacpp.json is missing or has no tokenize entries");
    std::string error;
    const auto file = GgufFile::open(path.toStdString(), error);
    QVERIFY2(file, error.c_str());
    const auto tokenizer = Tokenizer::fromGguf(*file, error);
    QVERIFY2(tokenizer, error.c_str());
    QVERIFY(tokenizer->warnings().empty());
    const std::string utf8 = text.toStdString();
    QCOMPARE(tokenizer->encode(utf8, tokenizer->addBos(), true),
             Ids(expected.begin(), expected.end()));
}

QTEST_GUILESS_MAIN(TestBpeTokenizer)
#include "test_bpe_tokenizer.moc"
