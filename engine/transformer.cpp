#include "transformer.h"
