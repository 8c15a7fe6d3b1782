#define ELEM half
#include "strided_copy_body.h"
