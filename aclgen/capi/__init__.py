"""The C ABI: CANN's headers and libraries over aclgen's runtime (`aclgen sdk`).

    abi.py       the C functions, types and constants as data, and each operator's two functions
    headers.py   the public headers, written from abi.py and the registry
    handles.py   the opaque handles C programs hold, checked on every use
    library.py   the Python side of every exported function
    build.py     the SDK tree: headers, the cffi embedding library, CANN's library names, set_env.sh
"""
