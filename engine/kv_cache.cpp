#include "kv_cache.h"
