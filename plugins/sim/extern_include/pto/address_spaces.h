// Device-compiler keywords that mean nothing on the host: address-space and core qualifiers.
#ifndef PYPTO_SIM_EXTERN_ADDRESS_SPACES_H_
#define PYPTO_SIM_EXTERN_ADDRESS_SPACES_H_

#ifndef __gm__
#define __gm__
#endif
#ifndef __ubuf__
#define __ubuf__
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __global__
#define __global__
#endif
#ifndef AICORE
#define AICORE
#endif

#endif  // PYPTO_SIM_EXTERN_ADDRESS_SPACES_H_
