# tilec_library(NAME DIR DEPS...): a static library of every .cc under DIR
# (recursively, tests excluded), or an interface library while DIR has none.
function(tilec_library name dir)
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${dir}/*.cc)
  if(srcs)
    add_library(${name} STATIC ${srcs})
    target_link_libraries(${name} PUBLIC ${ARGN})
    tilec_target_options(${name})
  else()
    add_library(${name} INTERFACE)
    target_link_libraries(${name} INTERFACE ${ARGN})
  endif()
endfunction()
