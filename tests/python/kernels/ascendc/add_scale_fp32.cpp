#define ELEM float
#include "add_scale_body.h"
