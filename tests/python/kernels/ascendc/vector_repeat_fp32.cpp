#define ELEM float
#include "vector_repeat_body.h"
