// A tool call as the chat shows it: a card with the tool's name, its arguments one per line, the
// call's confidence, and under it the attribution line ("set_light 46% · lock_door 12% · other
// 42%") whose tool names are links ("tool:set_light") that highlight that tool's sink slots.
#pragma once

#include "worker/engine_types.h"

#include <QPalette>
#include <QString>

#include <optional>

namespace sinkscope::ui {

// The arguments as "key: value" lines, values in JSON (strings quoted); "(no arguments)" when none.
QStringList readableArguments(const QString& argumentsJson);
// "set_light 46% · lock_door 12% · other 42%": the tools by share, highest first.
QString attributionText(const ToolCallView& call);
// The card's HTML for QTextDocument, coloured from `palette`; a negative confidence is not known
// (a call of a restored session) and the card says so.
QString callCardHtml(const ToolCallView& call, double confidence, const QPalette& palette);
// A card for a call that did not parse or validate.
QString callErrorHtml(const QString& error, const QPalette& palette);

QString toolLink(const QString& tool);                  // "tool:set_light"
std::optional<QString> toolOfLink(const QString& href); // the tool a link names
QString percentText(double share);                      // "46%"

} // namespace sinkscope::ui
