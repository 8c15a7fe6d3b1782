#define ELEM half
#include "vector_repeat_body.h"
