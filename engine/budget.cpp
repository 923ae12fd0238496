#include "budget.h"
