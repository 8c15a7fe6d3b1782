#define ELEM float
#include "vector_count_body.h"
