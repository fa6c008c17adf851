# Standalone build of ai-fabric against an installed ns-3 (Debian 12: libns3-dev 3.37).
# Provides build_lib / build_lib_example with the same arguments as ns-3's own
# macros so that the module's CMakeLists.txt is identical for both builds.

set(CMAKE_CXX_STANDARD 17) # exactly 17: C++14 fails in ns-3 headers, C++20 in singleton.h
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()

option(AI_FABRIC_WERROR "Treat compiler warnings as errors" OFF)

find_program(AI_FABRIC_CCACHE ccache)
if(AI_FABRIC_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${AI_FABRIC_CCACHE})
endif()

set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
set(AI_FABRIC_INCLUDE_DIR ${CMAKE_BINARY_DIR}/include)
# model/'s headers apart: model/ compiles seeing only these (and ns-3's), build_lib below.
set(AI_FABRIC_MODEL_INCLUDE_DIR ${CMAKE_BINARY_DIR}/include-model)
set(AI_FABRIC_MODULE_ROOT ${CMAKE_CURRENT_SOURCE_DIR})

set(ai_fabric_install_hint
    "apt-get install libns3-dev ns3 libgsl-dev libsqlite3-dev libboost-dev libboost-graph-dev nlohmann-json3-dev libprotobuf-dev protobuf-compiler googletest libgtest-dev libbenchmark-dev"
)

# Debian's ns3Config.cmake fails with pages of errors when files it references
# (helper programs from package ns3, libgsl.so from libgsl-dev) are missing.
# Look first and name what to install.
find_file(
  AI_FABRIC_NS3_TARGETS ns3Targets.cmake
  PATH_SUFFIXES lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/ns3 lib/cmake/ns3
  HINTS ${ns3_DIR}
)
if(NOT AI_FABRIC_NS3_TARGETS)
  message(
    FATAL_ERROR
      "ai-fabric: no installed ns-3 found (ns3Targets.cmake).\n"
      "Install Debian's ns-3 3.37:  ${ai_fabric_install_hint}\n"
      "or build in-tree: copy this directory to ns-3.37/contrib/ai-fabric."
  )
endif()
get_filename_component(ai_fabric_ns3_cmake_dir ${AI_FABRIC_NS3_TARGETS} DIRECTORY)
get_filename_component(ai_fabric_ns3_prefix "${ai_fabric_ns3_cmake_dir}/../../../.." ABSOLUTE)
file(GLOB ai_fabric_ns3_target_files ${ai_fabric_ns3_cmake_dir}/ns3Targets*.cmake)
set(ai_fabric_missing_files)
foreach(target_file ${ai_fabric_ns3_target_files})
  file(READ ${target_file} contents)
  string(REPLACE "\${_IMPORT_PREFIX}" "${ai_fabric_ns3_prefix}" contents "${contents}")
  string(REGEX MATCHALL
               "(IMPORTED_LOCATION[A-Z_]*|INTERFACE_LINK_LIBRARIES|INTERFACE_INCLUDE_DIRECTORIES) \"[^\"]*\""
               properties "${contents}"
  )
  # MATCHALL splits the quoted ;-lists too: each element is one path, maybe with a quote.
  foreach(path ${properties})
    string(REGEX REPLACE "^[A-Z_]+ " "" path "${path}")
    string(REPLACE "\"" "" path "${path}")
    if(path MATCHES "^/" AND NOT EXISTS "${path}")
      list(APPEND ai_fabric_missing_files ${path})
    endif()
  endforeach()
endforeach()
if(ai_fabric_missing_files)
  list(REMOVE_DUPLICATES ai_fabric_missing_files)
  string(REPLACE ";" "\n  " missing "${ai_fabric_missing_files}")
  message(
    FATAL_ERROR
      "ai-fabric: the installed ns-3 CMake package refers to files that are not installed:\n  ${missing}\n"
      "Debian's ns-3 package config needs all of:  ${ai_fabric_install_hint}"
  )
endif()

find_package(ns3 CONFIG QUIET HINTS ${ai_fabric_ns3_cmake_dir})
if(NOT ns3_FOUND)
  message(FATAL_ERROR "ai-fabric: find_package(ns3) failed. Install:  ${ai_fabric_install_hint}")
endif()
if(ns3_VERSION VERSION_LESS 3.36)
  message(
    FATAL_ERROR
      "ai-fabric: ns-3 ${ns3_VERSION} is too old for the CMake build (needs 3.36 or newer; tested with 3.37).\n"
      "For waf-era trees (3.29-3.35) use wscript-compat/wscript, see doc/building.md."
  )
endif()
set(NS3_VER ${ns3_VERSION})

# Module variables as ns-3 defines them in-tree (${libcore} and so on).
foreach(
  module
  core
  network
  internet
  point-to-point
  csma
  bridge
  applications
  stats
  flow-monitor
  traffic-control
  mpi
)
  if(TARGET ns3::lib${module})
    set(lib${module} ns3::lib${module})
  endif()
endforeach()
set(AI_FABRIC_NS3_MPI_SOURCE
    ""
    CACHE PATH "ns-3 source tree to build the mpi and point-to-point modules from with MPI (distributed runs, scripts/check-mpi)"
)
if(AI_FABRIC_NS3_MPI_SOURCE)
  include(${CMAKE_CURRENT_LIST_DIR}/ai-fabric-ns3-mpi.cmake)
endif()
set(LIB_AS_NEEDED_PRE -Wl,--no-as-needed)
set(LIB_AS_NEEDED_POST -Wl,--as-needed)

# Packet-level runs allocate and free a few small objects per event (ns-3 events, packets,
# queue nodes); glibc's malloc costs ~10 % of a 1024-GPU run, jemalloc ~20 % less CPU in
# total (doc/performance.md).  Every program of the standalone build links it first, so
# it replaces malloc for the ns-3 libraries too.  Sanitizer builds keep the system one.
set(ai_fabric_default_allocator jemalloc)
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  set(ai_fabric_default_allocator system) # ASan brings its own malloc
endif()
set(AI_FABRIC_ALLOCATOR
    "${ai_fabric_default_allocator}"
    CACHE STRING "malloc of the standalone programs: jemalloc (libjemalloc-dev) or system"
)
set_property(CACHE AI_FABRIC_ALLOCATOR PROPERTY STRINGS jemalloc system)
if(AI_FABRIC_ALLOCATOR STREQUAL "jemalloc")
  find_library(AI_FABRIC_JEMALLOC_LIBRARY jemalloc)
  if(NOT AI_FABRIC_JEMALLOC_LIBRARY)
    message(FATAL_ERROR "ai-fabric: jemalloc not found: apt-get install libjemalloc-dev "
                        "(or configure with -DAI_FABRIC_ALLOCATOR=system)"
    )
  endif()
  link_libraries(-Wl,--no-as-needed ${AI_FABRIC_JEMALLOC_LIBRARY} -Wl,--as-needed)
  # Its options (transparent huge pages) as the malloc_conf symbol every program defines.
  add_library(ai-fabric-malloc-conf OBJECT ${CMAKE_CURRENT_LIST_DIR}/ai-fabric-malloc-conf.cc)
  link_libraries(ai-fabric-malloc-conf)
elseif(NOT AI_FABRIC_ALLOCATOR STREQUAL "system")
  message(FATAL_ERROR "ai-fabric: AI_FABRIC_ALLOCATOR must be jemalloc or system, "
                      "not '${AI_FABRIC_ALLOCATOR}'"
  )
endif()

function(ai_fabric_standalone_build)
  # marker: CMakeLists.txt asks "if(COMMAND ai_fabric_standalone_build)"
endfunction()

function(ai_fabric_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(AI_FABRIC_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

function(ai_fabric_write_module_header name header_files)
  set(contents "// Generated by cmake/ai-fabric-standalone.cmake: every public header of ${name}.\n")
  string(APPEND contents "#ifndef NS3_MODULE_AI_FABRIC\n#define NS3_MODULE_AI_FABRIC\n")
  foreach(header ${header_files})
    get_filename_component(head ${header} NAME)
    string(APPEND contents "#include <ns3/${head}>\n")
  endforeach()
  string(APPEND contents "#endif\n")
  file(WRITE ${AI_FABRIC_INCLUDE_DIR}/ns3/${name}-module.h.tmp "${contents}")
  configure_file(
    ${AI_FABRIC_INCLUDE_DIR}/ns3/${name}-module.h.tmp ${AI_FABRIC_INCLUDE_DIR}/ns3/${name}-module.h
    COPYONLY
  )
endfunction()

function(build_lib)
  cmake_parse_arguments(
    "BLIB" "IGNORE_PCH" "LIBNAME"
    "SOURCE_FILES;HEADER_FILES;LIBRARIES_TO_LINK;TEST_SOURCES;DEPRECATED_HEADER_FILES;MODULE_ENABLED_FEATURES;PRIVATE_HEADER_FILES"
    ${ARGN}
  )
  set(target ${BLIB_LIBNAME})

  # model/ is the first layer and never includes a helper (CMakeLists.txt): its sources
  # compile as their own object library whose include path has model headers only, so
  # an upward include fails to build.  Everything else sees both directories.
  set(model_sources)
  set(model_headers)
  set(upper_sources)
  set(upper_headers)
  foreach(file ${BLIB_SOURCE_FILES} ${BLIB_HEADER_FILES} ${BLIB_PRIVATE_HEADER_FILES})
    set(layer upper)
    if(file MATCHES "^model/")
      set(layer model)
    endif()
    if(file MATCHES "\\.h$")
      list(APPEND ${layer}_headers ${file})
    else()
      list(APPEND ${layer}_sources ${file})
    endif()
  endforeach()

  # Headers are used as <ns3/name.h>, as in-tree: stage them flat, one directory per layer.
  foreach(header ${model_headers})
    get_filename_component(head ${header} NAME)
    configure_file(${header} ${AI_FABRIC_MODEL_INCLUDE_DIR}/ns3/${head} COPYONLY)
    # Build trees from before the split staged every header in include/: one copy each.
    file(REMOVE ${AI_FABRIC_INCLUDE_DIR}/ns3/${head})
  endforeach()
  foreach(header ${upper_headers})
    get_filename_component(head ${header} NAME)
    configure_file(${header} ${AI_FABRIC_INCLUDE_DIR}/ns3/${head} COPYONLY)
  endforeach()
  ai_fabric_write_module_header(${BLIB_LIBNAME} "${BLIB_HEADER_FILES}")

  set(ns_libs)
  set(other_libs)
  foreach(library ${BLIB_LIBRARIES_TO_LINK})
    if(library MATCHES "^ns3::")
      list(APPEND ns_libs ${library})
    else()
      list(APPEND other_libs ${library})
    endif()
  endforeach()

  add_library(${target}-model-obj OBJECT ${model_sources} ${model_headers})
  target_include_directories(${target}-model-obj PRIVATE ${AI_FABRIC_MODEL_INCLUDE_DIR})
  add_library(${target}-obj OBJECT ${upper_sources} ${upper_headers})
  target_include_directories(
    ${target}-obj PRIVATE ${AI_FABRIC_MODEL_INCLUDE_DIR} ${AI_FABRIC_INCLUDE_DIR}
  )
  foreach(objects ${target}-model-obj ${target}-obj)
    target_compile_definitions(
      ${objects}
      PRIVATE NS3_LOG_ENABLE # Debian's ns-3 was built with logging; it changes class layouts
              $<$<CONFIG:Release>:NS3_BUILD_PROFILE_RELEASE>
              $<$<CONFIG:Debug>:NS3_BUILD_PROFILE_DEBUG NS3_ASSERT_ENABLE> NS3_MODULE_COMPILATION
    )
    target_link_libraries(${objects} PRIVATE ${ns_libs} ${other_libs})
    ai_fabric_set_warnings(${objects})
  endforeach()
  set(AI_FABRIC_MODEL_OBJECTS ${target}-model-obj PARENT_SCOPE)

  # One shared library of both object sets, as in-tree.
  add_library(${target} SHARED $<TARGET_OBJECTS:${target}-model-obj> $<TARGET_OBJECTS:${target}-obj>)
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ns3-${target})
  target_include_directories(${target} PUBLIC ${AI_FABRIC_MODEL_INCLUDE_DIR} ${AI_FABRIC_INCLUDE_DIR})
  target_compile_definitions(
    ${target} INTERFACE NS3_LOG_ENABLE $<$<CONFIG:Release>:NS3_BUILD_PROFILE_RELEASE>
                        $<$<CONFIG:Debug>:NS3_BUILD_PROFILE_DEBUG NS3_ASSERT_ENABLE>
  )
  target_link_libraries(
    ${target} PUBLIC ${LIB_AS_NEEDED_PRE} ${ns_libs} ${LIB_AS_NEEDED_POST} PRIVATE ${other_libs}
  )

  if(BLIB_TEST_SOURCES)
    find_package(GTest QUIET)
    if(NOT GTest_FOUND)
      message(FATAL_ERROR "ai-fabric tests need GoogleTest:  apt-get install googletest libgtest-dev")
    endif()
    include(GoogleTest)
    add_executable(${target}-test ${BLIB_TEST_SOURCES})
    target_link_libraries(
      ${target}-test PRIVATE ${LIB_AS_NEEDED_PRE} ${target} ${LIB_AS_NEEDED_POST} GTest::gtest
                             GTest::gtest_main ${other_libs}
    )
    target_include_directories(${target}-test PRIVATE ${Boost_INCLUDE_DIRS})
    target_compile_definitions(
      ${target}-test PRIVATE AI_FABRIC_SOURCE_DIR="${CMAKE_CURRENT_SOURCE_DIR}"
    )
    ai_fabric_set_warnings(${target}-test)
    gtest_discover_tests(${target}-test DISCOVERY_TIMEOUT 120)
  endif()

  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/examples/CMakeLists.txt)
    set(BLIB_LIBNAME ${BLIB_LIBNAME})
    add_subdirectory(examples)
  endif()
endfunction()

function(build_lib_example)
  cmake_parse_arguments(
    "BLIB_EXAMPLE" "IGNORE_PCH" "NAME" "SOURCE_FILES;HEADER_FILES;LIBRARIES_TO_LINK" ${ARGN}
  )
  add_executable(${BLIB_EXAMPLE_NAME} ${BLIB_EXAMPLE_SOURCE_FILES} ${BLIB_EXAMPLE_HEADER_FILES})
  target_link_libraries(
    ${BLIB_EXAMPLE_NAME} PRIVATE ${LIB_AS_NEEDED_PRE} ${BLIB_EXAMPLE_LIBRARIES_TO_LINK}
                                 ${LIB_AS_NEEDED_POST}
  )
  ai_fabric_set_warnings(${BLIB_EXAMPLE_NAME})
  set(sources)
  foreach(source ${BLIB_EXAMPLE_SOURCE_FILES})
    file(RELATIVE_PATH rel ${AI_FABRIC_MODULE_ROOT} ${CMAKE_CURRENT_SOURCE_DIR}/${source})
    list(APPEND sources ${rel})
  endforeach()
  string(REPLACE ";" "," sources "${sources}")
  set_property(GLOBAL APPEND PROPERTY AI_FABRIC_PROGRAMS "${BLIB_EXAMPLE_NAME}:${sources}")
endfunction()

# What CMake builds, for scripts/check-wscript to compare the waf build with.
function(ai_fabric_write_build_lists)
  get_property(programs GLOBAL PROPERTY AI_FABRIC_PROGRAMS)
  file(
    WRITE ${CMAKE_BINARY_DIR}/ai-fabric-build-lists.txt
    "sources=${ai_fabric_sources}\nheaders=${ai_fabric_headers}\n"
    "tests=${ai_fabric_test_sources};${ai_fabric_ns3_test_adapter}\nprograms=${programs}\n"
    "protos=${ai_fabric_proto_files}\n"
  )
endfunction()

set(libai-fabric ai-fabric)
set(libai-fabric-obj ai-fabric-obj)
