# Runs a fake-runtime program with FAKECUDA_LOG=1 and checks that the runtime reached the driver
# exactly as cudart 13 does (reference fact 1): the log must begin with handshake_expected.txt, line
# for line, and no later line may come from a resolver other than the self-query one.
#
# Usage: cmake -DPROGRAM=<path> -P check_handshake.cmake
if(NOT PROGRAM)
    message(FATAL_ERROR "pass -DPROGRAM=<program to run>")
endif()

execute_process(
    COMMAND ${CMAKE_COMMAND} -E env FAKECUDA_LOG=1 --unset=LD_PRELOAD ${PROGRAM}
    RESULT_VARIABLE status
    ERROR_VARIABLE log)
if(NOT status EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} exited with ${status}:\n${log}")
endif()

string(REPLACE "\n" ";" lines "${log}")
list(FILTER lines INCLUDE REGEX "^fakecuda")
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/handshake_expected.txt expected)
list(LENGTH expected expected_count)

math(EXPR last "${expected_count} - 1")
foreach(i RANGE ${last})
    list(GET expected ${i} want)
    list(LENGTH lines have_count)
    if(i GREATER_EQUAL have_count)
        message(FATAL_ERROR "log ended after ${i} lines; expected next:\n  ${want}")
    endif()
    list(GET lines ${i} got)
    if(NOT got STREQUAL want)
        math(EXPR n "${i} + 1")
        message(FATAL_ERROR "handshake line ${n} differs:\n  expected: ${want}\n  got:      ${got}")
    endif()
endforeach()

list(SUBLIST lines ${expected_count} -1 rest)
foreach(line IN LISTS rest)
    if(line MATCHES "^fakecuda: (cuGetProcAddress|cuGetProcAddress_v2|resolver_self_v1|resolver_self_v2)\\(" OR
       line MATCHES "^fakecudart: dlsym")
        message(FATAL_ERROR "resolver use after the handshake:\n  ${line}")
    endif()
endforeach()
