/*
 * bcryptprimitives.dll for Wine 8 (Debian 12), which lacks it.
 *
 * Go 1.22+ Windows binaries draw their random bytes from ProcessPrng in
 * bcryptprimitives.dll and refuse to start without it. This one export
 * forwards to RtlGenRandom (advapi32's SystemFunction036), which Wine has.
 * scripts/wine-test.sh builds it with Debian's mingw-w64 at test time and
 * puts it in the throwaway Wine prefix; it is never shipped.
 */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    /* RtlGenRandom takes a ULONG length; larger requests go in pieces. */
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
