#include "chat_panel/call_card.h"

#include "views/view_colors.h"

#include <nlohmann/json.hpp>

#include <QLocale>

#include <algorithm>
#include <cmath>

namespace sinkscope::ui {

namespace {

using Json = nlohmann::ordered_json;

const QString kLinkScheme = QStringLiteral("tool:");
const QString kSeparator = QStringLiteral(" · ");

QString jsonText(const Json& value) {
    return QString::fromStdString(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

QList<QPair<QString, double>> sharesByShare(const ToolCallView& call) {
    QList<QPair<QString, double>> shares = call.toolShares;
    std::stable_sort(shares.begin(), shares.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    return shares;
}

QString colorName(const QColor& color) {
    return color.name(QColor::HexRgb);
}

} // namespace

QString percentText(double share) {
    return QStringLiteral("%1%").arg(QLocale().toString(std::lround(share * 100)));
}

QStringList readableArguments(const QString& argumentsJson) {
    const QByteArray bytes = argumentsJson.toUtf8();
    const Json arguments = Json::parse(bytes.constBegin(), bytes.constEnd(), nullptr, false);
    if (!arguments.is_object()) return {argumentsJson};
    QStringList lines;
    for (const auto& [key, value] : arguments.items())
        lines << QStringLiteral("%1: %2").arg(QString::fromStdString(key), jsonText(value));
    if (lines.isEmpty()) lines << QObject::tr("(no arguments)");
    return lines;
}

QString attributionText(const ToolCallView& call) {
    QStringList parts;
    for (const auto& [tool, share] : sharesByShare(call))
        parts << QStringLiteral("%1 %2").arg(tool, percentText(share));
    parts << QObject::tr("other %1").arg(percentText(call.otherShare));
    return parts.join(kSeparator);
}

QString toolLink(const QString& tool) {
    return kLinkScheme + tool;
}

std::optional<QString> toolOfLink(const QString& href) {
    if (!href.startsWith(kLinkScheme)) return std::nullopt;
    return href.mid(kLinkScheme.size());
}

QString callCardHtml(const ToolCallView& call, double confidence, const QPalette& palette) {
    const views::MaskColors colors = views::MaskColors::forPalette(palette);
    const QColor background = views::mixColors(palette.color(QPalette::Base), colors.sink, 0.12);
    const QColor muted = palette.color(QPalette::PlaceholderText);
    QString arguments;
    for (const QString& line : readableArguments(call.argumentsJson)) {
        const qsizetype colon = line.indexOf(QStringLiteral(": "));
        arguments +=
            colon < 0 ? QStringLiteral("<tr><td colspan=2>%1</td></tr>").arg(line.toHtmlEscaped())
                      : QStringLiteral("<tr><td style=\"color:%1\">%2&nbsp;</td>"
                                       "<td><tt>%3</tt></td></tr>")
                            .arg(colorName(muted), line.left(colon).toHtmlEscaped(),
                                 line.mid(colon + 2).toHtmlEscaped());
    }
    QString attribution;
    if (call.attributed) {
        QStringList parts;
        for (const auto& [tool, share] : sharesByShare(call))
            parts << QStringLiteral("<a href=\"%1\">%2</a> %3")
                         .arg(toolLink(tool).toHtmlEscaped(), tool.toHtmlEscaped(),
                              percentText(share));
        parts << QObject::tr("other %1").arg(percentText(call.otherShare));
        attribution = QStringLiteral("<tr><td style=\"color:%1\">%2 %3</td></tr>")
                          .arg(colorName(muted), QObject::tr("Attention on the pinned tools:"),
                               parts.join(kSeparator));
    }
    return QStringLiteral("<table width=\"100%\" cellpadding=\"6\" cellspacing=\"0\" "
                          "bgcolor=\"%1\" border=\"0\">"
                          "<tr><td><b>%2</b> &nbsp;<span style=\"color:%3\">%4</span></td></tr>"
                          "<tr><td><table cellpadding=\"1\" cellspacing=\"0\">%5</table></td></tr>"
                          "%6</table>")
        .arg(colorName(background), QObject::tr("Call %1").arg(call.name.toHtmlEscaped()),
             colorName(muted),
             confidence < 0 ? QObject::tr("restored from a saved session")
                            : QObject::tr("confidence %1").arg(percentText(confidence)),
             arguments, attribution);
}

QString callErrorHtml(const QString& error, const QPalette& palette) {
    const views::MaskColors colors = views::MaskColors::forPalette(palette);
    return QStringLiteral("<p style=\"color:%1\"><b>%2</b> %3</p>")
        .arg(colorName(colors.errorText), QObject::tr("Call rejected:"), error.toHtmlEscaped());
}

} // namespace sinkscope::ui
