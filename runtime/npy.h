// NumPy .npy files: reading and writing host tensors.
//
// Accepted (ParseNpy / ReadNpy):
//  * format versions 1.0, 2.0 and 3.0 (3.0 has a UTF-8 header);
//  * a header dict with exactly the keys 'descr', 'fortran_order' and 'shape',
//    in any order, written in Python literal syntax (' or " quotes, True/False,
//    tuples such as `(3,)` and `()`, trailing commas, any padding of spaces
//    and a newline);
//  * dtypes '|b1' (bool), '|i1' '<i2' '<i4' '<i8', '|u1' '<u2' '<u4' '<u8',
//    '<f2' '<f4' '<f8'. The byte-order characters '<', '|' and '=' all mean
//    little-endian here; '>' is accepted only for one-byte types.
//
// Rejected with a UserError that names the file: a missing magic string, other
// versions, truncated header or data, a malformed header, Fortran order,
// big-endian data, any other dtype (complex, object, strings, structured, …),
// shapes whose byte size overflows, and bytes after the data. Bool elements
// other than 0 are read as 1 (Tilec stores bools as 0/1 bytes).
//
// Written (SerializeNpy / WriteNpy): version 1.0 (2.0 if the header needs more
// than 65535 bytes), little-endian, C order, with the header padded by spaces
// and a newline so that the data starts at a multiple of 64 bytes, as NumPy
// itself writes it.
#pragma once

#include <string>
#include <string_view>

#include "tile_lang/tensor.h"

namespace tilec::runtime {

// Reads the .npy file at `path`. UserError (with the path and the system's
// reason) if it cannot be read, or any of the errors of ParseNpy.
lang::Tensor ReadNpy(const std::string& path);

// Parses the bytes of a .npy file. `name_for_errors` names the file in errors.
// Pre: none (any bytes are accepted as input).
// Post: a tensor with the file's dtype, shape and elements, or a UserError.
// Never crashes, and allocates only once the data is known to be present.
lang::Tensor ParseNpy(std::string_view bytes, const std::string& name_for_errors);

// Writes `t` to `path` as a .npy file. UserError with the path and the
// system's reason if the file cannot be written.
void WriteNpy(const std::string& path, const lang::Tensor& t);

// The bytes of a .npy file holding `t`.
std::string SerializeNpy(const lang::Tensor& t);

}  // namespace tilec::runtime
