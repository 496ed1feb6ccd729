// The OpenCL C API as Tilec uses it, and how its failures become DeviceErrors.
//
// Every hal/opencl file includes CL/cl.h through this header so the whole
// backend agrees on one API level: OpenCL 1.2, the newest level every vendor
// driver implements (2.x entry points are optional and the ICD loader may
// dispatch them to a null slot on a 1.2 platform).
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
// clCreateCommandQueue is deprecated from 2.0 on; keep it usable (and quiet)
// if another translation unit targets a newer level before including us.
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl.h>

#include <string>

#include "support/error.h"  // DeviceError, thrown by everything here

namespace tilec::hal::opencl {

// The symbolic name of an OpenCL status code ("CL_OUT_OF_RESOURCES"), or
// "CL_UNKNOWN_ERROR" for a code no header we know defines.
const char* ClErrorName(cl_int status);

// Throws DeviceError "<call> failed: <NAME> (<code>)", plus `detail` if given.
[[noreturn]] void ThrowClError(const char* call, cl_int status, const std::string& detail = {});

// Throws unless `status` is CL_SUCCESS. `call` names the OpenCL function.
inline void CheckCl(cl_int status, const char* call) {
  if (status != CL_SUCCESS) [[unlikely]]
    ThrowClError(call, status);
}

}  // namespace tilec::hal::opencl
