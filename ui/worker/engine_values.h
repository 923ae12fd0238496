// The engine's objects described as the worker's value types (engine_types.h), and the turns
// back: the model and its template, the tool block, calls and the conversation's turns. Engine
// thread only (they read the model and the chat).
#pragma once

#include "chat/conversation.h"
#include "session/tool_chat.h"
#include "tools/tool_schema.h"
#include "worker/engine_types.h"

#include <vector>

namespace sinkscope::ui {

TemplateInfo templateInfoOf(const ToolChat& chat);
ModelInfo modelInfoFor(const Model& model, const ToolChat& chat, const QString& path);
// The tokens' text one by one (BOS and markers written out), decoding UTF-8 across token
// boundaries.
QStringList piecesOf(const Tokenizer& tokenizer, const std::vector<int32_t>& tokens);
QList<qint32> idsOf(const std::vector<int32_t>& tokens);
ToolsParseResult parseToolsText(const QString& json);
QList<ToolSpan> toolSpansOf(const ToolBlock& block);
SinkBudgetInfo sinkBudgetInfo(const SinkBudget& budget);

// The call's name and its arguments as compact JSON (keys in their order); no attribution.
ToolCallView callViewOf(const FunctionCall& call);
QList<TurnView> turnViewsOf(const Conversation& conversation);
// The turns without tokens, to be rendered anew (ToolChat's `earlier`). Throws
// std::invalid_argument when a call's arguments are not a JSON object.
std::vector<Turn> turnsOf(const QList<TurnView>& views);

} // namespace sinkscope::ui
