import { Notification } from '@jupyterlab/apputils';

import { NotificationSlots } from '../notificationSlots';

afterEach(() => {
  Notification.dismiss();
});

describe('NotificationSlots', () => {
  it('replaces the notification on a subject instead of stacking a second one', () => {
    const slots = new NotificationSlots();

    slots.show('temperature', 'warning', 'GPU 0: 84 °C', { autoClose: 20000 });
    slots.show('temperature', 'warning', 'GPUs 0, 1: 88 °C', {
      autoClose: 20000
    });
    slots.show('memory', 'warning', 'GPU 1: memory 95% full', {
      autoClose: 20000
    });

    expect(
      Notification.manager.notifications.map(({ message }) => message)
    ).toEqual(['GPU 1: memory 95% full', 'GPUs 0, 1: 88 °C']);
  });

  it('shows a new notification once the last one on its subject was closed', () => {
    const slots = new NotificationSlots();
    const first = slots.show('lost', 'error', 'GPU 1 is lost.', {
      autoClose: false
    });
    Notification.dismiss(first);
    expect(slots.has('lost')).toBe(false);

    const second = slots.show('lost', 'error', 'GPU 1 is lost.', {
      autoClose: false
    });

    expect(second).not.toBe(first);
    expect(slots.has('lost')).toBe(true);
    expect(Notification.manager.count).toBe(1);
  });
});
