#define ELEM float
#include "pad_copy_body.h"
