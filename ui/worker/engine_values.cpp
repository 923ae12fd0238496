#include "worker/engine_values.h"

#include <QFileInfo>
#include <QStringDecoder>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace sinkscope::ui {

TemplateInfo templateInfoOf(const ToolChat& chat) {
    const ChatTemplate& chatTemplate = chat.chatTemplate();
    const ToolBlock& block = chat.toolBlock();
    TemplateInfo info;
    info.family = chatTemplate.family();
    info.toolsPinned = block.pinsTools;
    if (const ModelTemplate* model = chatTemplate.modelTemplate()) {
        info.hasSystemTurnOption = model->hasSystemTurnOption();
        info.toolsInSystemTurn = info.hasSystemTurnOption && model->options().toolsInSystemTurn;
    }
    info.notice =
        QString::fromStdString(block.notice.empty() ? chatTemplate.notice() : block.notice);
    info.callFormat = chat.callFormat();
    return info;
}

ModelInfo modelInfoFor(const Model& model, const ToolChat& chat, const QString& path) {
    const ModelConfig& config = model.config();
    ModelInfo info;
    info.path = path;
    info.name = QString::fromStdString(config.name);
    info.architecture = QString::fromStdString(config.architecture);
    info.nVocab = config.nVocab;
    info.nEmbd = config.nEmbd;
    info.nLayer = config.nLayer;
    info.nHead = config.nHead;
    info.nHeadKv = config.nHeadKv;
    info.headDim = config.headDim;
    info.nCtxTrain = config.nCtxTrain;
    info.parameters = model.parameterCount();
    info.fileBytes = QFileInfo(path).size();
    info.suggestedKvWindow = config.suggestedKvWindow;
    info.suggestedPositions = QString::fromStdString(config.suggestedPositionMode);
    std::map<std::string, int> typeCounts;
    for (const GgufTensorInfo& tensor : model.file().tensors())
        ++typeCounts[ggmlTypeName(tensor.type)];
    for (const auto& [type, count] : typeCounts)
        info.weightTypes.append({QString::fromStdString(type), count});
    std::stable_sort(info.weightTypes.begin(), info.weightTypes.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    const GgufFile& file = model.file();
    info.vocabularyModel =
        QString::fromStdString(file.getString("tokenizer.ggml.model").value_or(""));
    info.preTokenizer = QString::fromStdString(file.getString("tokenizer.ggml.pre").value_or(""));
    info.chatLayout = QString::fromLatin1(chatLayoutName(chat.chatTemplate().layout()));
    info.chatTemplate = templateInfoOf(chat);
    if (const auto source = file.getString("tokenizer.chat_template"))
        info.chatTemplateBytes = qint64(source->size());
    return info;
}

QStringList piecesOf(const Tokenizer& tokenizer, const std::vector<int32_t>& tokens) {
    QStringList pieces;
    QStringDecoder decoder(QStringDecoder::Utf8);
    for (const int32_t token : tokens) {
        const std::string piece = tokenizer.piece(token, true);
        pieces << decoder.decode(QByteArrayView(piece.data(), qsizetype(piece.size())));
    }
    return pieces;
}

QList<qint32> idsOf(const std::vector<int32_t>& tokens) {
    return QList<qint32>(tokens.cbegin(), tokens.cend());
}

ToolsParseResult parseToolsText(const QString& json) {
    const QByteArray utf8 = json.toUtf8();
    return parseTools(std::string_view(utf8.constData(), size_t(utf8.size())));
}

QList<ToolSpan> toolSpansOf(const ToolBlock& block) {
    QList<ToolSpan> spans;
    for (const ToolTokenRange& range : block.tools)
        spans.append({QString::fromStdString(range.name), range.begin, range.end});
    return spans;
}

SinkBudgetInfo sinkBudgetInfo(const SinkBudget& budget) {
    return SinkBudgetInfo{budget.sinkSlots, budget.window,      budget.bytesPerPosition,
                          budget.kvBytes,   budget.budgetBytes, budget.overBudget};
}

ToolCallView callViewOf(const FunctionCall& call) {
    ToolCallView view;
    view.name = QString::fromStdString(call.name);
    view.argumentsJson = QString::fromStdString(
        call.arguments.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
    return view;
}

QList<TurnView> turnViewsOf(const Conversation& conversation) {
    QList<TurnView> views;
    views.reserve(qsizetype(conversation.turns().size()));
    for (const Turn& turn : conversation.turns()) {
        TurnView view;
        view.role = turn.role;
        view.text = QString::fromStdString(turn.text);
        for (const FunctionCall& call : turn.calls)
            view.calls.append(callViewOf(call));
        view.tokenCount = int(turn.tokens.size());
        views.append(view);
    }
    return views;
}

std::vector<Turn> turnsOf(const QList<TurnView>& views) {
    std::vector<Turn> turns;
    turns.reserve(size_t(views.size()));
    for (const TurnView& view : views) {
        Turn& turn = turns.emplace_back();
        turn.role = view.role;
        turn.text = view.text.toStdString();
        for (const ToolCallView& callView : view.calls) {
            FunctionCall call;
            call.name = callView.name.toStdString();
            call.arguments =
                nlohmann::ordered_json::parse(callView.argumentsJson.toStdString(), nullptr, false);
            if (!call.arguments.is_object())
                throw std::invalid_argument("the arguments of a call to " + call.name +
                                            " are not a JSON object");
            turn.calls.push_back(std::move(call));
        }
    }
    return turns;
}

} // namespace sinkscope::ui
