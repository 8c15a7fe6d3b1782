#define ELEM half
#include "vector_count_body.h"
