# Cilk programs built with chanflowc at build time (part of chanflow's CMake package):
#
#   chanflow_add_cilk_executable(fib fib.c [other.c ...] [CHANFLOWC_ARGS -I include ...] [DEPENDS headers...])
#     an executable from a Cilk program's files (.c with OpenCilk keywords, .cilk for Cilk-5), as
#     `chanflowc fib.c other.c -o fib` makes it: Cilk functions run as channel-flow graphs.
#   chanflow_add_cilk_graphs(target fib.c [CHANFLOWC_ARGS ...] [DEPENDS headers...])
#     adds to a C++ target the graphs of a Cilk source's functions and their entry points
#     (<stem>__call_on_device, types in <stem>.types.h), without the source's host code.
#   DEPENDS: the program's own headers (#include "..."), whose helpers, types and constants
#   chanflowc compiles with the source: a change to one runs chanflowc again.

function(_chanflow_cilk_generate source out_var dir_var)
  cmake_parse_arguments(ARG "" "" "CHANFLOWC_ARGS;EMIT;DEPENDS" ${ARGN})
  get_filename_component(src "${source}" ABSOLUTE)
  get_filename_component(stem "${source}" NAME_WE)
  string(MD5 tag "${src}")
  string(SUBSTRING "${tag}" 0 8 tag)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/chanflowc/${stem}-${tag}")
  if(TARGET chanflowc)
    set(compiler chanflowc)
  else()
    set(compiler chanflow::chanflowc)
  endif()
  set(outputs)
  foreach(kind IN LISTS ARG_EMIT)
    if(kind STREQUAL "c")
      list(APPEND outputs "${dir}/${stem}.host.c")
    elseif(kind STREQUAL "cpp")
      list(APPEND outputs "${dir}/${stem}.graph.cpp")
    elseif(kind STREQUAL "h")
      list(APPEND outputs "${dir}/${stem}.types.h")
    endif()
  endforeach()
  string(REPLACE ";" "," emit "${ARG_EMIT}")
  add_custom_command(OUTPUT ${outputs}
    COMMAND ${compiler} "${src}" --emit=${emit} -o "${dir}" ${ARG_CHANFLOWC_ARGS}
    WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"  # relative -I in CHANFLOWC_ARGS: from the sources
    DEPENDS "${src}" ${ARG_DEPENDS} ${compiler}
    COMMENT "chanflowc ${source}" VERBATIM)
  set(${out_var} ${outputs} PARENT_SCOPE)
  set(${dir_var} ${dir} PARENT_SCOPE)
endfunction()

function(chanflow_add_cilk_executable name source)
  cmake_parse_arguments(ARG "" "" "CHANFLOWC_ARGS;DEPENDS" ${ARGN})
  # The -D and -I given to chanflowc, for the host code too (the user's files): joined or
  # separate (-I dir), a relative directory from this source directory, as chanflowc sees it.
  set(host_flags)
  set(pending)
  foreach(arg IN LISTS ARG_CHANFLOWC_ARGS)
    if(pending)
      set(arg "${pending}${arg}")
      set(pending)
    elseif(arg STREQUAL "-D" OR arg STREQUAL "-I")
      set(pending "${arg}")
      continue()
    endif()
    if(arg MATCHES "^-I(.+)$")
      get_filename_component(inc "${CMAKE_MATCH_1}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      list(APPEND host_flags "-I${inc}")
    elseif(arg MATCHES "^-D.")
      list(APPEND host_flags "${arg}")
    endif()
  endforeach()
  # The program's files: `source` and any others before the keywords, each translated alone.
  set(all_outputs)
  set(generated_dirs)
  foreach(src IN LISTS source ARG_UNPARSED_ARGUMENTS)
    _chanflow_cilk_generate("${src}" outputs dir EMIT c cpp h CHANFLOWC_ARGS ${ARG_CHANFLOWC_ARGS} DEPENDS ${ARG_DEPENDS})
    list(APPEND all_outputs ${outputs})
    list(APPEND generated_dirs "${dir}")
    # Its host code is the user's file written elsewhere: its "..." headers beside the source (that
    # file's only), and the user's flags (not the generated C++ graph's).
    get_filename_component(src_dir "${src}" ABSOLUTE)
    get_filename_component(src_dir "${src_dir}" DIRECTORY)
    get_filename_component(stem "${src}" NAME_WE)
    set_source_files_properties("${dir}/${stem}.host.c" PROPERTIES COMPILE_OPTIONS "-iquote;${src_dir};${host_flags}")
  endforeach()
  add_executable(${name} ${all_outputs})
  target_include_directories(${name} PRIVATE ${generated_dirs})
  if(TARGET chanflow_cilk_runtime)
    target_link_libraries(${name} PRIVATE chanflow_cilk_runtime chanflow_cilk_header)
  else()
    target_link_libraries(${name} PRIVATE chanflow::cilk_runtime chanflow::cilk_header)
  endif()
endfunction()

function(chanflow_add_cilk_graphs target source)
  cmake_parse_arguments(ARG "" "" "CHANFLOWC_ARGS;DEPENDS" ${ARGN})
  _chanflow_cilk_generate("${source}" outputs dir EMIT cpp h CHANFLOWC_ARGS ${ARG_CHANFLOWC_ARGS} DEPENDS ${ARG_DEPENDS})
  target_sources(${target} PRIVATE ${outputs})
  target_include_directories(${target} PRIVATE "${dir}")
  if(TARGET chanflow_cilk_runtime)
    target_link_libraries(${target} PRIVATE chanflow_cilk_runtime)
  else()
    target_link_libraries(${target} PRIVATE chanflow::cilk_runtime)
  endif()
endfunction()
