// Times, numbers and errors as the reader reads them: in the page's language and the account's time zone.

import { SpotterError } from '/clients/spotter.js';
import { nowMs } from './clock.js';
import { locale, t } from './i18n.js';
import { state } from './state.js';

export function formatTime(seconds, withDate = 'auto') {
  if (!seconds) return '';
  const date = new Date(seconds * 1000);
  const today = new Date(nowMs());
  const sameDay = date.toDateString() === today.toDateString();
  const options = withDate === true || (withDate === 'auto' && !sameDay)
    ? { dateStyle: 'medium', timeStyle: 'short' }
    : { timeStyle: 'short' };
  try {
    return new Intl.DateTimeFormat(locale(), { ...options, timeZone: state.me?.time_zone || undefined }).format(date);
  } catch {
    return new Intl.DateTimeFormat(locale(), options).format(date);
  }
}

export function formatNumber(value, digits = 0) {
  return new Intl.NumberFormat(locale(), { maximumFractionDigits: digits, minimumFractionDigits: digits }).format(value);
}

export function errorText(error) {
  if (error instanceof SpotterError) {
    if (error.code === 'connection_lost') return t('networkError');
    if (error.message) return error.message;
  }
  return t('genericError');
}
