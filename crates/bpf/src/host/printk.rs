//! `bpf_trace_printk` / `bpf_trace_vprintk` formatting (`bpf_printk`): the conversions
//! kernel/bpf/helpers.c bpf_bprintf_prepare accepts, printed as the kernel's
//! bstr_printf prints them. Without `l` an argument is 32 bits (bpf_bprintf_prepare
//! stores it as an int); `l`/`ll` take all 64. Flags `0 - + space` and a width are
//! honoured; `%p` prints the address in hex (the kernel hashes plain `%p`); `%s` reads
//! a NUL-terminated string of at most 64 bytes from the program's memory.
//!
//! A format the kernel refuses (an unknown conversion, more conversions than
//! arguments) is an error here too; the kernel returns -EINVAL, the simulator stops the
//! run naming it, since a silently missing line would hide it.

/// The longest `%s` string read.
const MAX_STR: usize = 64;

/// Formats `fmt` (up to its NUL) with `args`; `read_str(addr)` reads a `%s` argument.
pub fn format(
    fmt: &[u8],
    args: &[u64],
    read_str: &mut dyn FnMut(u64, usize) -> Result<String, String>,
) -> Result<String, String> {
    let fmt = &fmt[..fmt.iter().position(|&c| c == 0).unwrap_or(fmt.len())];
    let mut out = String::new();
    let mut next = args.iter();
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        i += 1;
        if c != b'%' {
            out.push(c as char);
            continue;
        }
        if fmt.get(i) == Some(&b'%') {
            out.push('%');
            i += 1;
            continue;
        }
        let (mut zero, mut left, mut plus, mut space) = (false, false, false, false);
        while let Some(&f) = fmt.get(i) {
            match f {
                b'0' => zero = true,
                b'-' => left = true,
                b'+' => plus = true,
                b' ' => space = true,
                _ => break,
            }
            i += 1;
        }
        let mut width = 0usize;
        while let Some(d) = fmt.get(i).filter(|d| d.is_ascii_digit()) {
            width = (width * 10 + usize::from(d - b'0')).min(64);
            i += 1;
        }
        let mut longs = 0;
        while fmt.get(i) == Some(&b'l') && longs < 2 {
            longs += 1;
            i += 1;
        }
        let conv = *fmt
            .get(i)
            .ok_or("bpf_printk: format ends inside a conversion")?;
        i += 1;
        let arg = *next.next().ok_or_else(|| {
            "bpf_printk: more conversions than arguments (at most 3 for bpf_trace_printk)"
                .to_string()
        })?;
        let wide = longs > 0;
        let body = match conv {
            b'd' | b'i' => {
                let v = if wide {
                    arg as i64
                } else {
                    i64::from(arg as u32 as i32)
                };
                let sign = if v < 0 {
                    "-"
                } else if plus {
                    "+"
                } else if space {
                    " "
                } else {
                    ""
                };
                format!("{sign}{}", v.unsigned_abs())
            }
            b'u' => (if wide { arg } else { u64::from(arg as u32) }).to_string(),
            b'x' => format!("{:x}", if wide { arg } else { u64::from(arg as u32) }),
            b'X' => format!("{:X}", if wide { arg } else { u64::from(arg as u32) }),
            b'c' if !wide => ((arg as u8) as char).to_string(),
            b'p' => {
                // %pK, %px, %pB...: the modifier letter is part of the conversion.
                if fmt.get(i).is_some_and(|c| c.is_ascii_alphabetic()) {
                    i += 1;
                }
                format!("{arg:#x}")
            }
            b's' if !wide => read_str(arg, MAX_STR)?,
            other => {
                return Err(format!(
                    "bpf_printk: conversion %{}{} is not one the kernel accepts",
                    "l".repeat(longs),
                    other as char
                ))
            }
        };
        let pad = width.saturating_sub(body.chars().count());
        if left {
            out.push_str(&body);
            out.extend(std::iter::repeat_n(' ', pad));
        } else if zero && !matches!(conv, b's' | b'c') {
            let (sign, digits) = body.split_at(usize::from(body.starts_with(['-', '+', ' '])));
            out.push_str(sign);
            out.extend(std::iter::repeat_n('0', pad));
            out.push_str(digits);
        } else {
            out.extend(std::iter::repeat_n(' ', pad));
            out.push_str(&body);
        }
    }
    Ok(out.trim_end_matches('\n').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(fmt: &str, args: &[u64]) -> Result<String, String> {
        format(fmt.as_bytes(), args, &mut |a, _| Ok(format!("<{a}>")))
    }

    #[test]
    fn conversions_as_the_kernel_prints_them() {
        // 0xffff_fffe as a 32-bit %d is -2; as %ld it is 4294967294.
        assert_eq!(f("cwnd %d\n", &[0xffff_fffe]).unwrap(), "cwnd -2");
        assert_eq!(f("%ld", &[0xffff_fffe]).unwrap(), "4294967294");
        assert_eq!(f("%lld", &[u64::MAX]).unwrap(), "-1");
        assert_eq!(
            f("%u %lu", &[1 << 32 | 7, 1 << 32 | 7]).unwrap(),
            "7 4294967303"
        );
        assert_eq!(f("%x/%llx", &[255, 1 << 40]).unwrap(), "ff/10000000000");
        assert_eq!(
            f("[%5d|%-4u|%05d]", &[42, 7, (-42i32) as u32 as u64]).unwrap(),
            "[   42|7   |-0042]"
        );
        assert_eq!(f("%s=%d%%", &[9, 3]).unwrap(), "<9>=3%");
    }

    #[test]
    fn what_the_kernel_refuses_is_an_error() {
        assert!(f("%d %d", &[1]).unwrap_err().contains("more conversions"));
        assert!(f("%f", &[1]).unwrap_err().contains("%f"));
        assert!(f("%lc", &[1]).unwrap_err().contains("%lc"));
    }
}
