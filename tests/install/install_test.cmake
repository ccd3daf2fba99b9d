# `cmake --install` into a fresh prefix, then what a user of the installed tree does:
# build examples/cpp against it through find_package (shared and static library) and
# through pkg-config, run the programs and compare their output with examples/cpp/
# expected.txt; import the installed Python package. Run by CTest (install_and_example):
#   cmake -DBUILD=<build dir> -DSOURCE=<source dir> -DWORK=<scratch dir> -DPYTHON=<python or ""> -P install_test.cmake
cmake_minimum_required(VERSION 3.25)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "${command}: exit ${status}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
file(GLOB_RECURSE installed ${prefix}/*)
set(libdir_config ${installed})
list(FILTER libdir_config INCLUDE REGEX "/cmake/simkit/simkitConfig\\.cmake$")
if(NOT libdir_config)
  message(FATAL_ERROR "no simkitConfig.cmake under ${prefix}")
endif()
cmake_path(GET libdir_config PARENT_PATH config_dir)  # <libdir>/cmake/simkit
cmake_path(GET config_dir PARENT_PATH libdir)
cmake_path(GET libdir PARENT_PATH libdir)
foreach(file bin/simkit include/simkit/neighbors.hpp include/simkit/dense_topk.hpp)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "not installed: ${file}")
  endif()
endforeach()
foreach(file libsimkit.so libsimkit.a pkgconfig/simkit.pc)
  if(NOT EXISTS ${libdir}/${file})
    message(FATAL_ERROR "not installed: ${libdir}/${file}")
  endif()
endforeach()
run(${prefix}/bin/simkit --version)

# The public headers stand alone: none includes a private header of src/.
file(GLOB headers ${prefix}/include/simkit/*.hpp)
foreach(header ${headers})
  file(STRINGS ${header} includes REGEX "^#include \"")
  foreach(line ${includes})
    if(NOT line MATCHES "^#include \"simkit/[a-z_]+\\.hpp\"$")
      message(FATAL_ERROR "${header} includes something else than a public header: ${line}")
    endif()
  endforeach()
endforeach()

file(READ ${SOURCE}/examples/cpp/expected.txt expected)
run(${CMAKE_COMMAND} -S ${SOURCE}/examples/cpp -B ${WORK}/example -G Ninja -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK}/example)
foreach(program simkit_example simkit_example_static)
  run(${WORK}/example/${program})
  if(NOT out STREQUAL expected)
    message(FATAL_ERROR "${program} printed\n${out}\nexpected\n${expected}")
  endif()
endforeach()

# pkg-config, the shared library found at run time through LD_LIBRARY_PATH.
set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)
run(pkg-config --cflags --libs simkit)
string(STRIP "${out}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(c++ -std=c++20 -O1 ${SOURCE}/examples/cpp/main.cpp ${flags} -o ${WORK}/example_pkgconfig)
run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${libdir} ${WORK}/example_pkgconfig)
if(NOT out STREQUAL expected)
  message(FATAL_ERROR "the pkg-config build printed\n${out}")
endif()

# The Python package, importable from the prefix and finding libsimkit.so there.
if(PYTHON)
  set(init ${installed})
  list(FILTER init INCLUDE REGEX "/simkit/__init__\\.py$")
  cmake_path(GET init PARENT_PATH package)
  cmake_path(GET package PARENT_PATH site)
  file(WRITE ${WORK}/check.py "import sys\nimport simkit\nassert simkit.__file__.startswith(sys.argv[1]), simkit.__file__\n"
       "assert simkit.fuzzy_hash(b'x' * 100) == '3:X:X'\n")
  run(${CMAKE_COMMAND} -E env PYTHONPATH=${site} ${PYTHON} ${WORK}/check.py ${prefix})
  file(GLOB module ${package}/_simkit*.so)
  run(ldd ${module})
  if(NOT out MATCHES "libsimkit\\.so[.0-9]* => ${prefix}/")
    message(FATAL_ERROR "the installed module does not load the installed libsimkit.so:\n${out}")
  endif()
endif()
file(REMOVE_RECURSE ${WORK})
