// The window's colours when the user picks them (--palette) instead of the desktop's: the
// offscreen platform and some desktops give no dark palette of their own.
#pragma once

#include <QString>

class QApplication;

// "light" or "dark": Fusion style with that palette. False for any other name.
bool applyPalette(QApplication& app, const QString& name);
