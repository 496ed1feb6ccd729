# libtilec, shared and static, and what `cmake --install` puts in the prefix:
#   include/tilec/tilec.h, tilec.hpp          the public API
#   LIBDIR/libtilec.so.0.1.0 (+ links), libtilec.a
#   LIBDIR/cmake/Tilec/TilecConfig*.cmake     find_package(Tilec): Tilec::tilec,
#                                             Tilec::tilec_static
#   LIBDIR/pkgconfig/tilec.pc                 pkg-config --cflags --libs tilec
# Only the C ABI (tilec_*) is exported from the shared library: the version
# script hides everything else, the static libraries' symbols included.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The shared library: the whole runtime (and what it uses) behind the C ABI.
# (The target is tilec_shared: `tilec` is the command-line tool.)
add_library(tilec_shared SHARED ${PROJECT_SOURCE_DIR}/runtime/c_api.cc)
target_link_libraries(tilec_shared PRIVATE tilec_runtime)
target_include_directories(tilec_shared PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>)
set_target_properties(tilec_shared PROPERTIES
  OUTPUT_NAME tilec VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/libtilec.map)
target_link_options(tilec_shared PRIVATE -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/libtilec.map
                    -Wl,--exclude-libs,ALL -Wl,--no-undefined)
tilec_target_options(tilec_shared)

# The static library: one archive holding every Tilec library's objects.
set(TILEC_STATIC_PARTS tilec_runtime tilec_hal tilec_compiler tilec_onnx tilec_lang tilec_support)
set(TILEC_STATIC ${CMAKE_CURRENT_BINARY_DIR}/libtilec.a)
set(TILEC_MRI "CREATE ${TILEC_STATIC}\n")
foreach(part ${TILEC_STATIC_PARTS})
  string(APPEND TILEC_MRI "ADDLIB $<TARGET_FILE:${part}>\n")
endforeach()
string(APPEND TILEC_MRI "SAVE\nEND\n")
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/libtilec.mri CONTENT "${TILEC_MRI}")
add_custom_command(OUTPUT ${TILEC_STATIC}
  COMMAND ${CMAKE_COMMAND} -E rm -f ${TILEC_STATIC}
  COMMAND ${CMAKE_AR} -M < ${CMAKE_CURRENT_BINARY_DIR}/libtilec.mri
  DEPENDS ${TILEC_STATIC_PARTS} ${CMAKE_CURRENT_BINARY_DIR}/libtilec.mri
  COMMENT "Merging the Tilec libraries into libtilec.a")
add_custom_target(tilec_static ALL DEPENDS ${TILEC_STATIC})

# What a program linking libtilec.a needs besides it.
set(TILEC_STATIC_DEPS "$<TARGET_FILE:LLVM>;$<TARGET_FILE:onnx_proto>;$<TARGET_FILE:protobuf::libprotobuf>;$<TARGET_FILE:OpenCL::OpenCL>;$<TARGET_FILE:fmt::fmt>;stdc++;m;pthread;dl")

install(TARGETS tilec_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${TILEC_STATIC} DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/tilec/tilec.h ${PROJECT_SOURCE_DIR}/include/tilec/tilec.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tilec)

set(TILEC_CONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Tilec)
# Both files find the prefix from where they are installed (cmake --install --prefix).
file(RELATIVE_PATH TILEC_CONFIG_TO_PREFIX /root/${TILEC_CONFIG_DIR} /root)
file(RELATIVE_PATH TILEC_PC_TO_PREFIX /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
configure_file(${PROJECT_SOURCE_DIR}/cmake/TilecConfig.cmake.in
               ${CMAKE_CURRENT_BINARY_DIR}/TilecConfig.cmake.in2 @ONLY)
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/TilecConfig.cmake
     INPUT ${CMAKE_CURRENT_BINARY_DIR}/TilecConfig.cmake.in2)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/TilecConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/TilecConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/TilecConfigVersion.cmake
        DESTINATION ${TILEC_CONFIG_DIR})

string(REPLACE ";" " " TILEC_PC_PRIVATE "${TILEC_STATIC_DEPS}")
string(REPLACE " stdc++ m pthread dl" " -lstdc++ -lm -lpthread -ldl" TILEC_PC_PRIVATE "${TILEC_PC_PRIVATE}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tilec.pc.in ${CMAKE_CURRENT_BINARY_DIR}/tilec.pc.in2 @ONLY)
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/tilec.pc INPUT ${CMAKE_CURRENT_BINARY_DIR}/tilec.pc.in2)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tilec.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
