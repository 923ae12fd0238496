// Help > About: what is running (Sinkscope's version, the Qt it runs on) and which model is loaded.
#pragma once

#include "worker/engine_types.h"

#include <QString>

class QWidget;

namespace sinkscope::ui {

// Rich text; `model` is nullptr before one has loaded.
QString aboutText(const ModelInfo* model);
void showAboutBox(const ModelInfo* model, QWidget* parent);

} // namespace sinkscope::ui
