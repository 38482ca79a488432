#include <windows.h>
#include <bcrypt.h>
/* Wine 8 lacks bcryptprimitives.dll, which Rust's std imports for ProcessPrng. */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    return BCryptGenRandom(NULL, data, (ULONG)len, BCRYPT_USE_SYSTEM_PREFERRED_RNG) == 0;
}
