# cmake -DEXPECTED=<expected_exports> -DLIBRARY=<libgpuleak.so> -DNM=<nm> -P check_exports.cmake
execute_process(COMMAND ${EXPECTED} OUTPUT_VARIABLE expected RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${EXPECTED} failed: ${rc}")
endif()
execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY} OUTPUT_VARIABLE nm_out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -D ${LIBRARY} failed: ${rc}")
endif()

string(REPLACE "\n" ";" expected "${expected}")
list(FILTER expected EXCLUDE REGEX "^$")
list(SORT expected)
set(actual "")
string(REPLACE "\n" ";" lines "${nm_out}")
foreach(line IN LISTS lines)
    # "ADDRESS TYPE NAME"; a versioned name would read NAME@@VERSION.
    if(line MATCHES "^[0-9a-fA-F]* +[A-Za-z] +([^ @]+)")
        list(APPEND actual ${CMAKE_MATCH_1})
    endif()
endforeach()
list(SORT actual)

set(missing ${expected})
list(REMOVE_ITEM missing ${actual})
set(extra ${actual})
list(REMOVE_ITEM extra ${expected})
list(LENGTH expected n)
if(missing OR extra)
    message(FATAL_ERROR "libgpuleak.so exports differ from the hook lists:\n"
                        "  not exported (extend preload/libgpuleak.map): ${missing}\n"
                        "  exported but no hook: ${extra}")
endif()
message(STATUS "libgpuleak.so exports exactly the ${n} expected symbols")
