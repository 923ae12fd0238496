#include "window/tools_page.h"

#include "views/tools_editor.h"
#include "views/view_colors.h"
#include "worker/display_text.h"

#include <QCheckBox>
#include <QLabel>
#include <QLocale>
#include <QVBoxLayout>

namespace sinkscope::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

QString mebibytes(qint64 bytes) {
    return QObject::tr("%1 MiB").arg(QLocale().toString(double(bytes) / kMiB, 'f', 2));
}

// "Tokens per tool: …<br>KV of sinks + window …", for the tools in force and for a preview (a
// warning when over the budget).
QString toolsAndBudgetHtml(const QList<ToolSpan>& toolSpans, const SinkBudgetInfo& budget,
                           const QColor& warning) {
    QStringList perTool;
    for (const ToolSpan& tool : toolSpans)
        perTool << QObject::tr("%1 %2").arg(tool.name.toHtmlEscaped()).arg(tool.count());
    const QString bytes =
        QObject::tr("KV of sinks + window (%1 + %2 positions): %3 of the %4 budget")
            .arg(budget.sinkSlots)
            .arg(budget.window)
            .arg(mebibytes(budget.kvBytes), mebibytes(budget.budgetBytes));
    return QObject::tr("Tokens per tool: %1")
               .arg(perTool.isEmpty() ? QObject::tr("no tools")
                                      : perTool.join(QStringLiteral(" · "))) +
           QStringLiteral("<br>") +
           (budget.overBudget ? QStringLiteral("<span style=\"color:%1\"><b>%2</b> %3</span>")
                                    .arg(warning.name(), QObject::tr("Over budget:"), bytes)
                              : bytes);
}

QString toolsStatusHtml(const SessionInfo& info, const QColor& warning) {
    // Said only when an Apply or a re-render took tokens over from the previous cache.
    const QString takenOver =
        info.reusedSinkTokens > 0
            ? QObject::tr(" %1 of the block taken over from the previous cache,")
                  .arg(tokenCount(info.reusedSinkTokens))
            : QString();
    return QObject::tr("Sink block: %1 pinned (the tool block) of %2 sink slots, %3 layout. Last "
                       "rebuild (%4): %5 ms,%6 %7 of the conversation's %8 re-prefilled.")
               .arg(tokenCount(info.sinksUsed))
               .arg(info.sinkSlots)
               .arg(info.chatLayout, info.reason.toLower(), formatMilliseconds(info.seconds),
                    takenOver, tokenCount(info.reprefilledTokens),
                    tokenCount(info.transcriptTokens)) +
           QStringLiteral("<br>") + toolsAndBudgetHtml(info.toolSpans, info.sinkBudget, warning);
}

QString toolsPreviewHtml(const ToolsPreview& preview, const QColor& warning) {
    return QObject::tr("<b>Edited tools, not applied yet:</b> %1 pinned (the tool block).")
               .arg(tokenCount(preview.sinksUsed)) +
           QStringLiteral("<br>") +
           toolsAndBudgetHtml(preview.toolSpans, preview.sinkBudget, warning);
}

// Whose tool block is pinned: "Needle's", "the ChatML template's" (the template's family).
QString blockOwner(const SessionInfo& info) {
    if (info.chatLayout == QLatin1String("needle")) return QObject::tr("Needle's");
    if (info.chatLayout != QLatin1String("template")) return QObject::tr("the plain layout's");
    const std::string_view markup = templateMarkupName(info.chatTemplate.family);
    if (markup.empty()) return QObject::tr("the model's template's");
    return QObject::tr("the %1 template's").arg(QString::fromUtf8(markup));
}

} // namespace

QString templateSummaryHtml(const SessionInfo& info) {
    const TemplateInfo& chat = info.chatTemplate;
    QString summary;
    if (!chat.toolsPinned)
        summary = QObject::tr("<b>Tools not pinned:</b> this template puts the tools in the user "
                              "turn, so they travel with the conversation (%1 pinned: BOS and the "
                              "template's opening).")
                      .arg(tokenCount(info.sinksUsed));
    else if (chat.toolsInSystemTurn)
        summary = QObject::tr("<b>Tools pinned in the system turn</b> (%1), not where the model "
                              "was trained to see them.")
                      .arg(tokenCount(info.sinksUsed));
    else
        summary = QObject::tr("<b>Tools pinned:</b> %1 tool block (%2).")
                      .arg(blockOwner(info), tokenCount(info.sinksUsed));
    summary += QStringLiteral("<br>") +
               QObject::tr("Calls: %1.").arg(callFormatText(chat.callFormat).toHtmlEscaped());
    if (!chat.notice.isEmpty())
        summary += QStringLiteral("<br><i>%1</i>").arg(chat.notice.toHtmlEscaped());
    return summary;
}

ToolsPage::ToolsPage(QWidget* parent) : QWidget(parent) {
    m_editor = new views::ToolsEditor(QStringLiteral(":/presets"), this);
    m_preview = new QLabel(this);
    m_preview->setObjectName(QStringLiteral("toolsPreview"));
    m_preview->setWordWrap(true);
    m_preview->setTextFormat(Qt::RichText);
    m_preview->hide();
    m_template = new QLabel(this);
    m_template->setObjectName(QStringLiteral("templateNotice"));
    m_template->setWordWrap(true);
    m_template->setTextFormat(Qt::RichText);
    m_template->hide();
    m_systemTurn = new QCheckBox(tr("Pin the tools in the system turn"), this);
    m_systemTurn->setObjectName(QStringLiteral("toolsInSystemTurn"));
    m_systemTurn->setEnabled(false);
    m_systemTurn->setToolTip(
        tr("For templates with a tools_in_user_message switch (Llama 3.1, 3.2): the tools are "
           "written in the system turn and pinned as sinks. This differs from how the model was "
           "trained, which sees them in the first user turn."));
    m_status = new QLabel(tr("No tools pinned yet."), this);
    m_status->setObjectName(QStringLiteral("toolsStatus"));
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::RichText);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_editor, 1);
    layout->addWidget(m_preview);
    layout->addWidget(m_template);
    layout->addWidget(m_systemTurn);
    layout->addWidget(m_status);
    connect(m_systemTurn, &QCheckBox::toggled, this, &ToolsPage::toolsInSystemTurnToggled);
}

void ToolsPage::showSession(const SessionInfo& info) {
    const QColor warning = views::MaskColors::forPalette(palette()).errorText;
    m_status->setText(toolsStatusHtml(info, warning));
    m_template->setText(templateSummaryHtml(info));
    m_template->show();
    m_systemTurn->setEnabled(info.chatTemplate.hasSystemTurnOption);
}

void ToolsPage::showPreview(const ToolsPreview& preview) {
    m_preview->setText(
        toolsPreviewHtml(preview, views::MaskColors::forPalette(palette()).errorText));
    m_preview->show();
}

void ToolsPage::hidePreview() {
    m_preview->hide();
}

void ToolsPage::setToolsInSystemTurn(bool enabled) {
    const QSignalBlocker blocker(m_systemTurn);
    m_systemTurn->setChecked(enabled);
}

QString ToolsPage::statusText() const {
    return m_status->text();
}

QString ToolsPage::previewText() const {
    return m_preview->isHidden() ? QString() : m_preview->text();
}

QString ToolsPage::templateText() const {
    return m_template->text();
}

} // namespace sinkscope::ui
