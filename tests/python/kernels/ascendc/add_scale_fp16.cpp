#define ELEM half
#include "add_scale_body.h"
