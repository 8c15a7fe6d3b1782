#define ELEM half
#include "pad_copy_body.h"
