# Installs the build tree into WORK_DIR/prefix, builds examples/embed against
# it (find_package and pkg-config) and runs every example.
set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/embed-build)
file(REMOVE_RECURSE ${prefix} ${build})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "$ ${ARGN}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
# No compiler launcher, no cache from the main build: a user's fresh project.
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/embed -B ${build} -G Ninja
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${build} -j 2)
run(${build}/add_c)
run(${build}/add_c_static)
run(${build}/conv_cpp)
# The command line, installed beside the library.
run(${prefix}/bin/tilec run ${SOURCE_DIR}/examples/conv_relu.tile --random-inputs
    -s D=f32[1,7,9,8] -s K=f32[3,3,8,8] --check)

# The Python module, from the prefix.
file(GLOB_RECURSE py_modules ${prefix}/_tilec.cpython*.so)
if(py_modules)
  list(GET py_modules 0 py_module)
  get_filename_component(py_dir ${py_module} DIRECTORY)
  get_filename_component(py_dir ${py_dir} DIRECTORY)
  run(${CMAKE_COMMAND} -E env PYTHONPATH=${py_dir} ${PYTHON} ${SOURCE_DIR}/examples/embed/numpy_add.py)
elseif(REQUIRE_PYTHON)
  message(FATAL_ERROR "the Python module was not installed")
endif()

# pkg-config, as a Makefile would use it.
file(GLOB_RECURSE pc_files ${prefix}/*/tilec.pc)
list(GET pc_files 0 pc)
get_filename_component(pc_dir ${pc} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
execute_process(COMMAND pkg-config --cflags --libs tilec OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs tilec failed")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
string(REGEX MATCH "-L[^ ;]+" libdir_flag "${flags}")
string(SUBSTRING "${libdir_flag}" 2 -1 libdir)
run(${C_COMPILER} ${SOURCE_DIR}/examples/embed/add.c ${flags} -Wl,-rpath,${libdir} -o ${build}/add_pkgconfig)
run(${build}/add_pkgconfig)
