#include "ggml_types.h"
