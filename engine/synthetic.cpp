#include "synthetic.h"
