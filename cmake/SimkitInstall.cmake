# `cmake --install build [--prefix P]`: the simkit program, the public headers, libsimkit
# (shared and static) with a CMake package and a pkg-config file, and the Python package.
#   find_package(simkit CONFIG REQUIRED)                     simkit::simkit (libsimkit.so)
#   find_package(simkit CONFIG REQUIRED COMPONENTS static)   also simkit::simkit_static
# (examples/cpp/ is a consumer; tests/install/ builds it against an installed tree.)
include(CMakePackageConfigHelpers)
set(SIMKIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/simkit)

install(TARGETS simkit_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/simkit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
target_compile_features(simkit_shared PUBLIC cxx_std_20)
target_compile_features(simkit PUBLIC cxx_std_20)
set_target_properties(simkit PROPERTIES EXPORT_NAME simkit_static)
if(SIMKIT_WITH_CUDA)
  # Within this build CMake adds the CUDA runtime where CUDA objects are linked; a
  # project linking the installed libsimkit.a (no CUDA language of its own) gets it here.
  target_link_libraries(simkit INTERFACE $<INSTALL_INTERFACE:CUDA::cudart_static>)
endif()
install(TARGETS simkit_shared EXPORT simkit-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS simkit EXPORT simkit-static-targets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT simkit-targets NAMESPACE simkit:: DESTINATION ${SIMKIT_CMAKE_DIR})
install(EXPORT simkit-static-targets NAMESPACE simkit:: DESTINATION ${SIMKIT_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/simkitConfig.cmake.in
  ${PROJECT_BINARY_DIR}/simkitConfig.cmake INSTALL_DESTINATION ${SIMKIT_CMAKE_DIR})
# 0.x: a new minor version may change the interface.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/simkitConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/simkitConfig.cmake ${PROJECT_BINARY_DIR}/simkitConfigVersion.cmake
  DESTINATION ${SIMKIT_CMAKE_DIR})

# pkg-config: `pkg-config --cflags --libs simkit` (libsimkit.so); Libs.private names what
# libsimkit.a needs beside it.
set(SIMKIT_PC_PRIVATE "-ltbb -lfmt -lxxhash -lopenblas -licuuc -licudata -lroaring -lz -lbz2 -lzstd -lexpat -lpthread")
set(SIMKIT_PC_CFLAGS "")
if(SIMKIT_WITH_CUDA)
  set(SIMKIT_PC_PRIVATE "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt ${SIMKIT_PC_PRIVATE}")
  set(SIMKIT_PC_CFLAGS "-DSIMKIT_HAVE_CUDA=1")
endif()
# The prefix relative to the file, so that `--prefix` at install time holds.
file(RELATIVE_PATH SIMKIT_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/simkit.pc.in ${PROJECT_BINARY_DIR}/simkit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/simkit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The installed tree as a user sees it: examples/cpp built against it (find_package and
# pkg-config), the Python package imported from it (tests/install/install_test.cmake).
if(SIMKIT_TESTS)
  add_test(NAME install_and_example COMMAND ${CMAKE_COMMAND} -DBUILD=${PROJECT_BINARY_DIR}
    -DSOURCE=${PROJECT_SOURCE_DIR} -DWORK=${PROJECT_BINARY_DIR}/install-test
    "-DPYTHON=$<$<BOOL:${SIMKIT_WITH_PYTHON}>:${SIMKIT_PYTHON_EXECUTABLE}>"
    -P ${PROJECT_SOURCE_DIR}/tests/install/install_test.cmake)
  set_tests_properties(install_and_example PROPERTIES LABELS install)
endif()
