# Distributed runs against the installed ns-3: Debian's libns3-dev has no mpi module, so
# ns-3's mpi module and its point-to-point module with MPI (PointToPointRemoteChannel) are
# compiled from an ns-3 source tree of the same version (AI_FABRIC_NS3_MPI_SOURCE, set by
# scripts/check-mpi) with the definitions of Debian's build (release profile, logging), and
# replace ns3::libpoint-to-point for this build.  Everything else is Debian's.
find_package(MPI REQUIRED COMPONENTS CXX)
set(ai_fabric_ns3_src ${AI_FABRIC_NS3_MPI_SOURCE}/src)
if(NOT EXISTS ${ai_fabric_ns3_src}/mpi/model/mpi-interface.cc)
  message(FATAL_ERROR "AI_FABRIC_NS3_MPI_SOURCE=${AI_FABRIC_NS3_MPI_SOURCE}: not an ns-3 source tree")
endif()

# Public headers, flat as <ns3/name.h>, in a directory of their own that the two libraries
# below publish: every layer of the module sees them (the model's remote channel too).
set(ai_fabric_ns3_mpi_include_dir ${CMAKE_BINARY_DIR}/include-ns3-mpi)
foreach(
  header
  mpi/model/mpi-interface.h
  mpi/model/mpi-receiver.h
  mpi/model/parallel-communication-interface.h
  point-to-point/helper/point-to-point-helper.h
  point-to-point/model/point-to-point-channel.h
  point-to-point/model/point-to-point-net-device.h
  point-to-point/model/point-to-point-remote-channel.h
  point-to-point/model/ppp-header.h
)
  get_filename_component(head ${header} NAME)
  configure_file(
    ${ai_fabric_ns3_src}/${header} ${ai_fabric_ns3_mpi_include_dir}/ns3/${head} COPYONLY
  )
endforeach()

function(ai_fabric_ns3_mpi_library name)
  cmake_parse_arguments("LIB" "" "" "SOURCES;LINK" ${ARGN})
  add_library(ai-fabric-ns3-${name} SHARED ${LIB_SOURCES})
  set_target_properties(ai-fabric-ns3-${name} PROPERTIES OUTPUT_NAME ns3-${name}-mpi)
  target_include_directories(
    ai-fabric-ns3-${name} PUBLIC ${ai_fabric_ns3_mpi_include_dir} PRIVATE ${MPI_CXX_INCLUDE_DIRS}
  )
  target_compile_definitions(
    ai-fabric-ns3-${name} PRIVATE NS3_MPI NS3_LOG_ENABLE NS3_BUILD_PROFILE_RELEASE
                                  NS3_MODULE_COMPILATION OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX
  )
  target_link_libraries(ai-fabric-ns3-${name} PUBLIC ${LIB_LINK} PRIVATE ${MPI_CXX_LIBRARIES})
  add_library(ns3::lib${name}-mpi ALIAS ai-fabric-ns3-${name})
endfunction()

ai_fabric_ns3_mpi_library(
  mpi
  SOURCES
    ${ai_fabric_ns3_src}/mpi/model/distributed-simulator-impl.cc
    ${ai_fabric_ns3_src}/mpi/model/granted-time-window-mpi-interface.cc
    ${ai_fabric_ns3_src}/mpi/model/mpi-interface.cc
    ${ai_fabric_ns3_src}/mpi/model/mpi-receiver.cc
    ${ai_fabric_ns3_src}/mpi/model/null-message-mpi-interface.cc
    ${ai_fabric_ns3_src}/mpi/model/null-message-simulator-impl.cc
    ${ai_fabric_ns3_src}/mpi/model/remote-channel-bundle-manager.cc
    ${ai_fabric_ns3_src}/mpi/model/remote-channel-bundle.cc
  LINK ns3::libcore ns3::libnetwork
)
ai_fabric_ns3_mpi_library(
  point-to-point
  SOURCES
    ${ai_fabric_ns3_src}/point-to-point/helper/point-to-point-helper.cc
    ${ai_fabric_ns3_src}/point-to-point/model/point-to-point-channel.cc
    ${ai_fabric_ns3_src}/point-to-point/model/point-to-point-net-device.cc
    ${ai_fabric_ns3_src}/point-to-point/model/point-to-point-remote-channel.cc
    ${ai_fabric_ns3_src}/point-to-point/model/ppp-header.cc
  LINK ns3::libnetwork ns3::libmpi-mpi
)

# What the module's CMakeLists.txt reads, as an ns-3 tree configured with --enable-mpi has it.
set(ENABLE_MPI TRUE)
set(libmpi ns3::libmpi-mpi)
set(libpoint-to-point ns3::libpoint-to-point-mpi)
