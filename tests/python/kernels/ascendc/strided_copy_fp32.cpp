#define ELEM float
#include "strided_copy_body.h"
