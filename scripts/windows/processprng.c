/*
 * bcryptprimitives.dll for Wine before 9.0, which lacks it: Go's Windows
 * runtime (Go 1.22 and later) loads bcryptprimitives.dll from System32 at
 * start-up and gets its random bytes from ProcessPrng; without the DLL a
 * Go program dies with "bcryptprimitives.dll not found" before main.
 * ProcessPrng is implemented with advapi32's SystemFunction036
 * (RtlGenRandom), which Wine has. Built by scripts/windows/run.sh with
 * x86_64-w64-mingw32-gcc into a private Wine prefix; never shipped.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
