// GgufFile::open on real files: empty, a directory, missing, stories260K, mapped or copied.
#include "gguf/gguf.h"
#include "gguf_test_support.h"
#include "model/model.h"
#include "model/synthetic.h"
#include "session/session.h"
#include "test_support.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>

using namespace sinkscope;
using namespace sinkscope::test;

namespace {

// The logits of BOS and a few tokens through a fresh session.
std::vector<float> logitsAfterPrompt(const Model& model) {
    Session session(model, SessionOptions{});
    const std::vector<int32_t> prompt = {1, 100, 150, 200};
    const std::span<const float> logits = session.prefill(prompt);
    return {logits.begin(), logits.end()};
}

} // namespace

class TestGgufOpen : public QObject {
    Q_OBJECT

private slots:
    void openEmptyFile();
    void openDirectory();
    void openMissingFile();
    void openStories260K();
    void openMapsOrCopies();
    void copiedModelSurvivesTruncation();
    void mappedModelSurvivesChangesToItsFile_data();
    void mappedModelSurvivesChangesToItsFile();
};

void TestGgufOpen::openEmptyFile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("empty.gguf");
    QFile empty(path);
    QVERIFY(empty.open(QIODevice::WriteOnly));
    empty.close();
    std::string error;
    QVERIFY(!GgufFile::open(path.toStdString(), error));
    QCOMPARE(QString::fromStdString(error),
             path + ": the file is empty (0 bytes), not a GGUF file");
}

void TestGgufOpen::openDirectory() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    std::string error;
    QVERIFY(!GgufFile::open(dir.path().toStdString(), error));
    QCOMPARE(QString::fromStdString(error), dir.path() + " is a directory");
}

void TestGgufOpen::openMissingFile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("absent.gguf");
    std::string error;
    QVERIFY(!GgufFile::open(path.toStdString(), error));
    QCOMPARE(QString::fromStdString(error), "cannot open " + path + ": No such file or directory");
}

void TestGgufOpen::openStories260K() {
    SINKSCOPE_REQUIRE_STORIES();
    std::string error;
    const auto file = GgufFile::open(sinkscope::test::storiesModelPath().toStdString(), error);
    QVERIFY2(file, error.c_str());
    QCOMPARE(file->version(), 3u);
    QCOMPARE(file->alignment(), uint64_t(32));
    QCOMPARE(file->tensors().size(), size_t(48)); // embeddings, output norm, output, 5 x 9
    QCOMPARE(file->getString("general.architecture"), std::optional<std::string>("llama"));
    QCOMPARE(file->getInt("llama.block_count"), std::optional<int64_t>(5));
    QCOMPARE(file->getInt("llama.embedding_length"), std::optional<int64_t>(64));
    QCOMPARE(file->getInt("tokenizer.ggml.bos_token_id"), std::optional<int64_t>(1));
    QCOMPARE(file->find("tokenizer.ggml.tokens")->arraySize(), size_t(512));
    const GgufTensorInfo* embeddings = file->findTensor("token_embd.weight");
    QVERIFY(embeddings);
    QCOMPARE(embeddings->type, GgmlType::F32);
    QCOMPARE(embeddings->dims, (std::vector<int64_t>{64, 512}));
    QCOMPARE(reinterpret_cast<uintptr_t>(embeddings->data) % 32, uintptr_t(0));
    const auto* weights = reinterpret_cast<const float*>(embeddings->data);
    for (int i = 0; i < 64 * 512; ++i)
        QVERIFY(std::isfinite(weights[i]));
    QCOMPARE(file->findTensor("blk.4.ffn_down.weight")->dims, (std::vector<int64_t>{172, 64}));
}

void TestGgufOpen::openMapsOrCopies() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("small.gguf").toStdString();
    std::string error;
    QVERIFY2(writeSyntheticModel(smallSpec(), path, error), error.c_str());
    const auto mapped = GgufFile::open(path, error, GgufReadMode::Map);
    const auto copied = GgufFile::open(path, error, GgufReadMode::Copy);
    QVERIFY2(mapped && copied, error.c_str());
    QVERIFY(mapped->isMapped());
    QVERIFY(!copied->isMapped());
    QCOMPARE(copied->fileSize(), mapped->fileSize());
    QCOMPARE(copied->tensors().size(), mapped->tensors().size());
    for (const GgufTensorInfo& tensor : mapped->tensors()) {
        const GgufTensorInfo* twin = copied->findTensor(tensor.name);
        QVERIFY(twin && twin->data != tensor.data);
        QVERIFY(std::memcmp(twin->data, tensor.data, tensor.byteSize) == 0);
    }
    const std::string missing = dir.filePath("absent.gguf").toStdString();
    QVERIFY(!GgufFile::open(missing, error, GgufReadMode::Copy));
    QCOMPARE(error, "cannot open " + missing + ": No such file or directory");
}

// A copied model is the process's own: truncating its file afterwards changes nothing.
void TestGgufOpen::copiedModelSurvivesTruncation() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("truncated-later.gguf");
    std::string error;
    QVERIFY2(writeSyntheticModel(smallSpec(), path.toStdString(), error), error.c_str());
    const auto model =
        Model::fromGguf(GgufFile::open(path.toStdString(), error, GgufReadMode::Copy), error);
    QVERIFY2(model, error.c_str());
    QVERIFY(!model->file().isMapped());
    QVERIFY(QFile::resize(path, 0));
    QCOMPARE(QFileInfo(path).size(), 0);

    const auto reference =
        Model::fromGguf(GgufFile::fromBytes(syntheticModelBytes(smallSpec()), error), error);
    QVERIFY2(reference, error.c_str());
    QCOMPARE(logitsAfterPrompt(*model), logitsAfterPrompt(*reference));
}

QTEST_GUILESS_MAIN(TestGgufOpen)
#include "test_gguf_open.moc"

void TestGgufOpen::mappedModelSurvivesChangesToItsFile_data() {
    QTest::addColumn<QString>("change");
    QTest::addColumn<bool>("quantized");
    const std::pair<const char*, const char*> changes[] = {
        {"truncated to nothing", "truncate"},
        {"truncated to its header", "truncate-header"},
        {"rewritten in place with another model", "rewrite"},
        {"deleted", "delete"}};
    for (const auto& [what, change] : changes) {
        QTest::addRow("%s, F32", what) << change << false;
        QTest::addRow("%s, Q8_0", what) << change << true;
    }
}

// A mapped model detaches from its file once loaded (GgufFile::detachFromFile): truncating the
// file (what `cp` over it does first) would otherwise raise SIGBUS on the next weight read in
// place, and rewriting it in place would change the weights under the model. Every page is read
// after the change: the logits read every weight the model keeps in place (all of them in F32; the
// quantized matrices at the levels that do not relay them).
void TestGgufOpen::mappedModelSurvivesChangesToItsFile() {
    QFETCH(QString, change);
    QFETCH(bool, quantized);
    SyntheticSpec spec = smallSpec();
    spec.weightType = quantized ? GgmlType::Q8_0 : GgmlType::F32;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("changed-later.gguf");
    std::string error;
    QVERIFY2(writeSyntheticModel(spec, path.toStdString(), error), error.c_str());
    const auto model =
        Model::fromGguf(GgufFile::open(path.toStdString(), error, GgufReadMode::Map), error);
    QVERIFY2(model, error.c_str());
    QVERIFY(model->file().isMapped());

    if (change == "truncate") {
        QVERIFY(QFile::resize(path, 0));
    } else if (change == "truncate-header") {
        QVERIFY(QFile::resize(path, 4096));
    } else if (change == "rewrite") {
        SyntheticSpec other = spec;
        other.seed += 1;
        const std::vector<uint8_t> bytes = syntheticModelBytes(other);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadWrite)); // the same inode, written over in place
        QCOMPARE(file.write(reinterpret_cast<const char*>(bytes.data()),
                            static_cast<qint64>(bytes.size())),
                 static_cast<qint64>(bytes.size()));
        file.close();
    } else {
        QVERIFY(QFile::remove(path));
    }

    const auto reference =
        Model::fromGguf(GgufFile::fromBytes(syntheticModelBytes(spec), error), error);
    QVERIFY2(reference, error.c_str());
    QCOMPARE(logitsAfterPrompt(*model), logitsAfterPrompt(*reference));
}
