#include "gguf_writer.h"
