#include "model_files/model_info_dialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFormLayout>
#include <QLabel>
#include <QLocale>
#include <QVBoxLayout>

namespace sinkscope::ui {

namespace {

QString vocabularyText(const ModelInfo& info) {
    const QLocale locale;
    QString kind = info.vocabularyModel == QLatin1String("llama")  ? QObject::tr("SentencePiece")
                   : info.vocabularyModel == QLatin1String("gpt2") ? QObject::tr("byte-level BPE")
                                                                   : info.vocabularyModel;
    if (!info.preTokenizer.isEmpty())
        kind += QObject::tr(" (pre-tokenizer %1)").arg(info.preTokenizer);
    return QObject::tr("%1 tokens, %2").arg(locale.toString(info.nVocab), kind);
}

QString templateText(const ModelInfo& info) {
    const QString layout = info.chatLayout == QLatin1String("needle") ? QObject::tr("Needle")
                           : info.chatLayout == QLatin1String("template")
                               ? QObject::tr("the model's own template")
                               : QObject::tr("plain text");
    if (info.chatTemplateBytes == 0)
        return QObject::tr("%1 (the file has no chat template)").arg(layout);
    return QObject::tr("%1 (the file's template: %2 bytes)")
        .arg(layout, QLocale().toString(info.chatTemplateBytes));
}

QString toolsPlacementText(const TemplateInfo& chat) {
    if (!chat.toolsPinned)
        return chat.hasSystemTurnOption
                   ? QObject::tr("in the user turn, not pinned (the template can write them in "
                                 "the system turn)")
                   : QObject::tr("in the user turn, not pinned");
    if (chat.toolsInSystemTurn)
        return QObject::tr("in the system turn, pinned (the template's switch, not as trained)");
    return QObject::tr("pinned as the sink block");
}

QString weightTypesText(const ModelInfo& info) {
    QStringList parts;
    for (const auto& [type, count] : info.weightTypes)
        parts << QObject::tr("%1 × %2").arg(type).arg(count);
    return parts.join(QStringLiteral(", "));
}

QString hintsText(const ModelInfo& info) {
    QStringList hints;
    if (info.suggestedKvWindow > 0) hints << QObject::tr("window %1").arg(info.suggestedKvWindow);
    if (!info.suggestedPositions.isEmpty())
        hints << QObject::tr("%1 positions").arg(info.suggestedPositions);
    return hints.isEmpty() ? QObject::tr("none") : hints.join(QStringLiteral(", "));
}

} // namespace

ModelInfoDialog::ModelInfoDialog(const ModelInfo& info, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Model Information — %1").arg(info.displayName()));
    const QLocale locale;
    m_rows = {
        {tr("Name"), info.displayName()},
        {tr("File"), QDir::toNativeSeparators(info.path)},
        {tr("File size"), locale.formattedDataSize(info.fileBytes)},
        {tr("Architecture"), info.architecture},
        {tr("Parameters"), locale.toString(info.parameters)},
        {tr("Layers"), QString::number(info.nLayer)},
        {tr("Embedding"), QString::number(info.nEmbd)},
        {tr("Attention heads"),
         tr("%1 query, %2 key/value, %3 wide").arg(info.nHead).arg(info.nHeadKv).arg(info.headDim)},
        {tr("Weight types"), weightTypesText(info)},
        {tr("Vocabulary"), vocabularyText(info)},
        {tr("Chat template"), templateText(info)},
        {tr("Template family"), QString::fromUtf8(templateFamilyName(info.chatTemplate.family))},
        {tr("Tools"), toolsPlacementText(info.chatTemplate)},
        {tr("Tool calls"), callFormatText(info.chatTemplate.callFormat)},
        {tr("Trained context"), tr("%1 tokens").arg(locale.toString(info.nCtxTrain))},
        {tr("Window hints"), hintsText(info)},
    };
    auto* form = new QFormLayout;
    for (const auto& [label, value] : m_rows) {
        auto* text = new QLabel(value);
        text->setTextInteractionFlags(Qt::TextSelectableByMouse);
        form->addRow(label + QLatin1Char(':'), text);
    }
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);
}

} // namespace sinkscope::ui
