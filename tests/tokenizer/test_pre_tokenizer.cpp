// The BPE pre-tokenizer's words, worked out by hand from llama.cpp's regexes (src/llama-vocab.cpp,
// src/unicode.cpp at c392e5094): digit grouping per family, contractions, whitespace runs,
// non-ASCII letters, numbers and spaces, and the extra splits of the multi-regex families.
#include <QtTest>

#include "tokenizer/pre_tokenizer.h"

#include <string>
#include <vector>

using namespace sinkscope;

class TestPreTokenizer : public QObject {
    Q_OBJECT

private slots:
    void words_data();
    void words();
    void familyNames_data();
    void familyNames();
    void wordsCoverAnyBytes();
};

void TestPreTokenizer::words_data() {
    QTest::addColumn<QString>("pre");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("words");
    const auto row = [](const char* name, const char* pre, const char* text, QStringList words) {
        QTest::newRow(name) << QString(pre) << QString(text) << words;
    };

    // Digits: Llama-3 groups of three, Qwen2 and SmolLM single digits, GPT-2 whole runs; the
    // default and Falcon cut [0-9]{3} out of GPT-2's runs. \p{N} includes No (², ½).
    row("llama-bpe digits", "llama-bpe", "12345", {"123", "45"});
    row("llama-bpe space then digits", "llama-bpe", "a 1234", {"a", " ", "123", "4"});
    row("qwen2 digits", "qwen2", "12345", {"1", "2", "3", "4", "5"});
    row("smollm digits", "smollm", "x 123", {"x", " ", "1", "2", "3"});
    row("gpt-2 digits", "gpt-2", "x 12345", {"x", " 12345"});
    row("default digits", "default", "12345", {"123", "45"});
    row("falcon digits", "falcon", "1234567", {"123", "456", "7"});
    row("qwen2 Arabic-Indic digits", "qwen2", "x٣٤", {"x", "٣", "٤"});
    row("llama-bpe superscripts", "llama-bpe", "x²³⁴⁵", {"x", "²³⁴", "⁵"});
    row("gpt-2 vulgar half", "gpt-2", "ied 4 ½", {"ied", " 4", " ½"});

    // Contractions: case-sensitive in GPT-2's regex, case-insensitive in Llama-3's.
    row("gpt-2 I'm", "gpt-2", "I'm", {"I", "'m"});
    row("gpt-2 they'll've", "gpt-2", "they'll've", {"they", "'ll", "'ve"});
    row("gpt-2 upper case", "gpt-2", "we'LL", {"we", "'", "LL"});
    row("llama-bpe upper case", "llama-bpe", "we'LL", {"we", "'LL"});
    row("qwen2 'Re", "qwen2", "you'Re", {"you", "'Re"});
    row("gpt-2 apostrophe then space", "gpt-2", "' era", {"'", " era"});
    row("llama-bpe apostrophe and letters", "llama-bpe", "'x", {"'x"});

    // Whitespace: a run before a word leaves its last space to the word; line breaks end
    // Llama-3's whitespace words.
    row("gpt-2 spaces", "gpt-2", "a   b", {"a", "  ", " b"});
    row("gpt-2 trailing spaces", "gpt-2", "a  ", {"a", "  "});
    row("gpt-2 line breaks", "gpt-2", "a\n\nb", {"a", "\n", "\n", "b"});
    row("gpt-2 tab before a word", "gpt-2", "\tb", {"\t", "b"});
    row("llama-bpe line breaks", "llama-bpe", "a\n\nb", {"a", "\n\n", "b"});
    row("llama-bpe spaces around a break", "llama-bpe", "a  \n  b", {"a", "  \n", " ", " b"});
    row("llama-bpe tab before a word", "llama-bpe", "\tb", {"\tb"});
    row("llama-bpe punctuation then breaks", "llama-bpe", "a.\n\nb", {"a", ".\n\n", "b"});
    row("llama-bpe lone space at the end", "llama-bpe", "a ", {"a", " "});

    // Non-ASCII letters, marks, symbols and whitespace.
    row("gpt-2 Führer", "gpt-2", "Führer", {"Führer"});
    row("gpt-2 Cyrillic", "gpt-2", "нещо на", {"нещо", " на"});
    row("gpt-2 CJK and kana", "gpt-2", "日本語のテキスト", {"日本語のテキスト"});
    row("gpt-2 combining mark is no letter", "gpt-2", "e\u0301x", {"e", "\u0301", "x"});
    row("gpt-2 no-break space", "gpt-2", "a\u00A0b", {"a", "\u00A0", "b"});
    row("llama-bpe no-break space", "llama-bpe", "a\u00A0b", {"a", "\u00A0b"});
    row("gpt-2 ideographic spaces", "gpt-2", "a\u3000\u3000b", {"a", "\u3000", "\u3000", "b"});
    row("gpt-2 emoji", "gpt-2", "a 🦙!", {"a", " 🦙!"});
    row("llama-bpe emoji and letters", "llama-bpe", "🦙.cpp", {"🦙.", "cpp"});

    // The families of several regexes.
    row("default punctuation", "default", "hello!!world", {"hello", "!!", "world"});
    row("default symbols", "default", "a+=b", {"a", "+=", "b"});
    row("falcon punctuation", "falcon", "a--b$$c`d", {"a", "--", "b", "$$", "c", "`", "d"});
    row("deepseek-llm words", "deepseek-llm", "Hello 世界 123", {"Hello", " ", "世界", " ", "123"});
    row("deepseek-llm punctuation", "deepseek-llm", "a, b!", {"a", ",", " b", "!"});
    row("deepseek-llm trailing spaces", "deepseek-llm", "ab  ", {"ab", "  "});
    // U+3000 is inside DeepSeek's "　-。", but llama.cpp's std::wregex sees it as whitespace.
    row("deepseek-llm ideographic space is no punctuation", "deepseek-llm", "。\u3000\u3000",
        {"。", "\u3000\u3000"});
    row("bloom", "bloom", "Hello, world. Bye", {"Hello", ",", " world", ".", " Bye"});
}

void TestPreTokenizer::words() {
    QFETCH(QString, pre);
    QFETCH(QString, text);
    QFETCH(QStringList, words);
    std::string warning;
    const PreTokenizer preTokenizer = PreTokenizer::forName(pre.toStdString(), warning);
    QVERIFY2(warning.empty(), warning.c_str());
    const std::string utf8 = text.toStdString();
    QStringList split;
    for (const std::string_view word : preTokenizer.split(utf8))
        split.push_back(QString::fromUtf8(word.data(), static_cast<qsizetype>(word.size())));
    QCOMPARE(split, words);
}

// tokenizer.ggml.pre names map to llama.cpp's pre-tokenizer types, with that type's flags.
void TestPreTokenizer::familyNames_data() {
    QTest::addColumn<QString>("pre");
    QTest::addColumn<QString>("family");
    QTest::addColumn<bool>("ignoresMerges");
    QTest::addColumn<bool>("addsBos");
    QTest::newRow("default") << "default"
                             << "default" << false << false;
    QTest::newRow("gpt-2") << "gpt-2"
                           << "gpt2" << false << false;
    QTest::newRow("olmo") << "olmo"
                          << "gpt2" << false << false;
    QTest::newRow("llama-bpe") << "llama-bpe"
                               << "llama3" << true << true;
    QTest::newRow("llama3") << "llama3"
                            << "llama3" << true << true;
    QTest::newRow("falcon3") << "falcon3"
                             << "llama3" << true << true;
    QTest::newRow("smaug-bpe") << "smaug-bpe"
                               << "dbrx" << false << false;
    QTest::newRow("qwen2") << "qwen2"
                           << "qwen2" << false << false;
    QTest::newRow("deepseek-r1-qwen") << "deepseek-r1-qwen"
                                      << "qwen2" << false << false;
    QTest::newRow("smollm") << "smollm"
                            << "starcoder" << false << false;
    QTest::newRow("starcoder") << "starcoder"
                               << "starcoder" << false << false;
    QTest::newRow("deepseek-llm") << "deepseek-llm"
                                  << "deepseek-llm" << false << false;
    QTest::newRow("falcon") << "falcon"
                            << "falcon" << false << false;
}

void TestPreTokenizer::familyNames() {
    QFETCH(QString, pre);
    QFETCH(QString, family);
    QFETCH(bool, ignoresMerges);
    QFETCH(bool, addsBos);
    std::string warning = "stale";
    const PreTokenizer preTokenizer = PreTokenizer::forName(pre.toStdString(), warning);
    QCOMPARE(warning, std::string());
    QCOMPARE(QString::fromUtf8(preTokenizer.family().data(),
                               static_cast<qsizetype>(preTokenizer.family().size())),
             family);
    QCOMPARE(preTokenizer.ignoresMerges(), ignoresMerges);
    QCOMPARE(preTokenizer.addsBosByDefault(), addsBos);
}

// Invalid UTF-8 (stray continuations, truncated sequences, overlong forms, bytes past F4) splits
// like U+FFFD in llama.cpp, but the words keep the bytes: they always add up to the text.
void TestPreTokenizer::wordsCoverAnyBytes() {
    const std::string text = "a\x80\xBF b\xC3 \xE2\x82x\xC0\x80 \xF5\x80\x80\x80 \xFF\xFE"
                             "12\xED\xA0\x80'S \n\n";
    for (const char* pre : {"default", "gpt-2", "llama-bpe", "qwen2", "smollm", "deepseek-llm",
                            "deepseek-coder", "falcon", "bloom", "viking"}) {
        std::string warning;
        const PreTokenizer preTokenizer = PreTokenizer::forName(pre, warning);
        std::string joined;
        for (const std::string_view word : preTokenizer.split(text)) {
            QVERIFY2(!word.empty(), pre);
            joined += word;
        }
        QVERIFY2(joined == text, pre);
    }
}

QTEST_GUILESS_MAIN(TestPreTokenizer)
#include "test_pre_tokenizer.moc"
